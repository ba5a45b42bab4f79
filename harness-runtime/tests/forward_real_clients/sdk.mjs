// Drives real OpenCode 1.18.33 (with the harness's scripted model) through the official SDK
// (@opencode-ai/sdk 1.18.33: its v2 client, the one the real CLI uses, and the default v1 client).
// Usage: node sdk.mjs <baseUrl> <directory>. The model's script is the Rust test's: "hello"
// answers "Hello from the scripted model.", "again" answers "Again.", "read the notes" reads
// notes.txt (reads ask) and then answers "Read it.", "wait" never answers.
// Prints one JSON line per check: {"check": name, "ok": bool, "detail": text}. Details carry no
// ids, URLs, paths or times, so the test compares them between a run attached to the agent and
// one through its forwarder.
import { createOpencodeClient } from "@opencode-ai/sdk/v2"
import { createOpencodeClient as createLegacyClient } from "@opencode-ai/sdk"

const [baseUrl, directory] = process.argv.slice(2)
const CEILING_MS = Number(process.env.SDK_CEILING_MS || 20000)

function report(check, ok, detail = "") {
  console.log(JSON.stringify({ check, ok: Boolean(ok), detail: String(detail) }))
}

/// `promise`, or a rejection naming `what` after the ceiling.
async function within(what, promise) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${CEILING_MS} ms`)), CEILING_MS)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/// Runs one check; a failure or a hang is reported, never thrown.
async function check(name, body) {
  try {
    const [ok, detail] = await within(name, body())
    report(name, ok, detail)
  } catch (error) {
    report(name, false, `threw: ${error?.message ?? error}`)
  }
}

const client = createOpencodeClient({ baseUrl, directory })

/// The directory's event stream, open (its `server.connected` read): nothing is replayed, so
/// every check subscribes before it prompts. `until` reads up to a matching event.
async function listen() {
  const controller = new AbortController()
  const { stream } = await client.event.subscribe({}, { signal: controller.signal, sseMaxRetryAttempts: 0 })
  const events = stream[Symbol.asyncIterator]()
  const first = await within("server.connected", events.next())
  if (first.value?.type !== "server.connected") throw new Error(`the first event was ${first.value?.type}`)
  const seen = []
  return {
    seen,
    close: () => controller.abort(),
    async until(predicate, what) {
      for (;;) {
        const { value, done } = await within(what, events.next())
        if (done) throw new Error(`the event stream ended before ${what}`)
        seen.push(value)
        if (predicate(value)) return value
      }
    },
  }
}

const idleOf = (sessionID) => (e) => e.type === "session.idle" && e.properties?.sessionID === sessionID
const text = (parts) => (parts ?? []).filter((p) => p.type === "text").map((p) => p.text).join("")

/// The texts of the assistant's finished text parts among `events`.
function finishedTexts(events) {
  const assistant = new Set(
    events.filter((e) => e.type === "message.updated" && e.properties.info.role === "assistant")
      .map((e) => e.properties.info.id),
  )
  return events
    .filter((e) => e.type === "message.part.updated")
    .map((e) => e.properties.part)
    .filter((p) => p.type === "text" && p.time?.end && assistant.has(p.messageID))
    .map((p) => p.text)
}

/// A turn posted with prompt_async and read from the events until idle; `during` acts on the
/// events as they come (it returns when it is done, before idle). Returns the turn's events, the
/// prompt's status and the session's messages.
async function turn(title, prompt, during = async () => {}) {
  const { data: session } = await client.session.create({ title })
  const events = await listen()
  try {
    const { response } = await client.session.promptAsync({
      sessionID: session.id,
      parts: [{ type: "text", text: prompt }],
    })
    await during(events, session)
    await events.until(idleOf(session.id), `session.idle of ${title}`)
    const { data } = await client.session.messages({ sessionID: session.id })
    return { status: response.status, seen: events.seen, messages: data }
  } finally {
    events.close()
  }
}

let root
await check("session.create", async () => {
  const { data, response } = await client.session.create({ title: "real sdk" })
  root = data
  const ok = response.status === 200 && data?.id?.startsWith("ses") && data.title === "real sdk" &&
    data.directory === directory
  return [ok, `status ${response.status}, title ${data?.title}, ${data?.directory === directory ? "its" : "another"} directory`]
})
await check("session.get_and_list", async () => {
  const { data } = await client.session.get({ sessionID: root.id })
  const { data: list } = await client.session.list()
  const listed = (list ?? []).filter((s) => s.id === root.id).length
  return [data?.id === root.id && listed === 1, `title ${data?.title}, listed ${listed}`]
})
await check("session.prompt.blocking", async () => {
  const { data } = await client.session.prompt({ sessionID: root.id, parts: [{ type: "text", text: "hello" }] })
  const reply = text(data?.parts)
  return [data?.info?.role === "assistant" && reply === "Hello from the scripted model." && !data.info.error,
    `${data?.info?.role} ${JSON.stringify(reply)}, finish ${data?.info?.finish}`]
})
await check("session.prompt_async.events_until_idle", async () => {
  const events = await listen()
  try {
    const { response } = await client.session.promptAsync({
      sessionID: root.id,
      parts: [{ type: "text", text: "again" }],
    })
    await events.until(idleOf(root.id), "session.idle")
    const mine = events.seen.filter((e) => (e.properties?.sessionID ?? e.properties?.part?.sessionID ??
      e.properties?.info?.sessionID) === root.id)
    const types = new Set(mine.map((e) => e.type))
    const texts = finishedTexts(mine)
    const ok = response.status === 204 && texts.length === 1 && texts[0] === "Again." &&
      ["message.updated", "message.part.updated", "session.status", "session.idle"].every((t) => types.has(t))
    return [ok, `status ${response.status}, texts ${JSON.stringify(texts)}`]
  } finally {
    events.close()
  }
})
await check("permission.asked_listed_replied", async () => {
  let asked
  let listed
  let replied
  const { status, seen, messages } = await turn("reads", "read the notes", async (events, session) => {
    const event = await events.until(
      (e) => e.type === "permission.asked" && e.properties.sessionID === session.id, "permission.asked")
    asked = event.properties.permission
    const { data } = await client.permission.list()
    listed = (data ?? []).filter((p) => p.id === event.properties.id).length
    replied = await client.permission.reply({ requestID: event.properties.id, reply: "once" })
    await events.until((e) => e.type === "permission.replied", "permission.replied")
  })
  const tool = messages.flatMap((m) => m.parts).find((p) => p.type === "tool")
  const last = messages.at(-1)
  const texts = finishedTexts(seen)
  const ok = status === 204 && asked === "read" && listed === 1 && replied.data === true &&
    tool?.tool === "read" && tool.state.status === "completed" && text(last.parts) === "Read it." &&
    JSON.stringify(texts) === JSON.stringify(["Read it."])
  return [ok, `asked ${asked}, listed ${listed}, reply ${JSON.stringify(replied?.data)}, ` +
    `${tool?.tool} ${tool?.state?.status}, texts ${JSON.stringify(texts)}`]
})
await check("session.abort", async () => {
  let aborted
  const { messages } = await turn("aborted", "wait", async (events, session) => {
    // The model's answer began (and never goes on): the turn is in flight.
    await events.until((e) => e.type === "message.part.updated" && e.properties.part.sessionID === session.id &&
      e.properties.part.type === "step-start", "the answer's step-start")
    aborted = await client.session.abort({ sessionID: session.id })
  })
  const name = messages.at(-1).info.error?.name
  return [aborted?.data === true && name === "MessageAbortedError", `abort ${JSON.stringify(aborted?.data)}, error ${name}`]
})
await check("session.messages", async () => {
  const { data } = await client.session.messages({ sessionID: root.id })
  const roles = (data ?? []).map((m) => `${m.info.role}:${text(m.parts)}`).join(", ")
  return [roles === "user:hello, assistant:Hello from the scripted model., user:again, assistant:Again.", roles]
})
await check("v1.session.prompt", async () => {
  const legacy = createLegacyClient({ baseUrl, directory })
  const { data: session } = await legacy.session.create({ body: { title: "legacy" } })
  const { data } = await legacy.session.prompt({
    path: { id: session.id },
    body: { parts: [{ type: "text", text: "hello" }] },
  })
  const reply = text(data?.parts)
  return [session?.directory === directory && reply === "Hello from the scripted model.", `reply ${JSON.stringify(reply)}`]
})
process.exit(0)
