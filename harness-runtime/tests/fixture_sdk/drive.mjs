// Drives the fixture agent through the official SDK (@opencode-ai/sdk 1.18.33, its v2 client, the
// one the real CLI uses). Usage: node drive.mjs <phase> <baseUrl> <dirA> <dirB>.
// Prints one JSON line per check: {"check": name, "ok": bool, "detail": text}. Details carry no
// ids, URLs or paths (they are volatile); the Rust test asserts each check.
import { createOpencodeClient } from "@opencode-ai/sdk/v2"
import { createOpencodeClient as createLegacyClient } from "@opencode-ai/sdk"

const [phase, baseUrl, dirA, dirB] = process.argv.slice(2)
const CEILING_MS = Number(process.env.FIXTURE_SDK_CEILING_MS || 15000)

function report(check, ok, detail = "") {
  console.log(JSON.stringify({ check, ok: Boolean(ok), detail: String(detail) }))
}

/// Runs one check with a ceiling, so a hung request is reported as a failure, not a hang.
async function check(name, body) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not done within ${2 * CEILING_MS} ms`)), 2 * CEILING_MS)
  })
  try {
    const [ok, detail] = await Promise.race([body(), timeout])
    report(name, ok, detail)
  } catch (error) {
    report(name, false, `threw: ${error?.message ?? error}`)
  } finally {
    clearTimeout(timer)
  }
}

const clientA = createOpencodeClient({ baseUrl, directory: dirA })
const clientB = createOpencodeClient({ baseUrl, directory: dirB })

/// One event stream of a client's directory; `until` reads it up to a matching event.
async function listen(client) {
  const controller = new AbortController()
  const { stream } = await client.event.subscribe({}, { signal: controller.signal, sseMaxRetryAttempts: 0 })
  const iterator = stream[Symbol.asyncIterator]()
  const seen = []
  const first = await next(iterator, "server.connected")
  seen.push(first)
  return {
    seen,
    close: () => controller.abort(),
    async until(predicate, what) {
      for (;;) {
        const event = await next(iterator, what)
        seen.push(event)
        if (predicate(event)) return event
      }
    },
  }
}

async function next(iterator, what) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} event within ${CEILING_MS} ms`)), CEILING_MS)
  })
  try {
    const { value, done } = await Promise.race([iterator.next(), timeout])
    if (done) throw new Error(`the event stream ended before ${what}`)
    return value
  } finally {
    clearTimeout(timer)
  }
}

const idleOf = (sessionID) => (e) => e.type === "session.idle" && e.properties?.sessionID === sessionID
const text = (parts) => (parts ?? []).filter((p) => p.type === "text").map((p) => p.text).join("")
const typesOf = (events) => events.map((e) => e.type).filter((t) => t !== "server.heartbeat")

async function basics() {
  let root
  await check("session.create", async () => {
    const { data, response } = await clientA.session.create({ title: "alpha report" })
    root = data
    return [response.status === 200 && data?.id?.startsWith("ses") && data.title === "alpha report",
      `status ${response.status}`]
  })
  await check("session.create.directory_decoded", async () => {
    const ok = root.directory === dirA
    return [ok, ok ? "" : root.directory?.includes("%2F") ? "percent-encoded" : "another directory"]
  })
  await check("session.get", async () => {
    const { data } = await clientA.session.get({ sessionID: root.id })
    return [data?.id === root.id && data.title === "alpha report", `title ${data?.title}`]
  })
  const { data: child } = await clientA.session.create({ title: "alpha child", parentID: root.id })
  await clientA.session.create({ title: "beta notes" })
  await check("session.list", async () => {
    const { data } = await clientA.session.list()
    return [data?.length === 3, `${data?.length} sessions`]
  })
  await check("session.list.roots", async () => {
    const { data } = await clientA.session.list({ roots: true })
    return [data?.length === 2 && !data.some((s) => s.id === child.id), `${data?.length} sessions`]
  })
  await check("session.list.limit", async () => {
    const { data } = await clientA.session.list({ limit: 1 })
    return [data?.length === 1, `${data?.length} sessions`]
  })
  await check("session.list.search", async () => {
    const { data } = await clientA.session.list({ search: "ALPHA" })
    const titles = (data ?? []).map((s) => s.title).sort()
    return [JSON.stringify(titles) === JSON.stringify(["alpha child", "alpha report"]), titles.join(", ")]
  })
  await check("session.prompt.blocking", async () => {
    const { data } = await clientA.session.prompt({
      sessionID: root.id,
      parts: [{ type: "text", text: "hello" }],
    })
    return [data?.info?.role === "assistant" && text(data.parts) === "Fixture completed.",
      `reply ${JSON.stringify(text(data?.parts))}`]
  })

  // Events until idle, scoped by directory: B's turn must not reach A's stream, nor A's B's.
  const { data: other } = await clientB.session.create({ title: "in B" })
  const eventsA = await listen(clientA)
  const eventsB = await listen(clientB)
  await check("session.prompt_async.events_until_idle", async () => {
    const { response } = await clientB.session.promptAsync({
      sessionID: other.id,
      parts: [{ type: "text", text: "in B" }],
    })
    await eventsB.until(idleOf(other.id), "session.idle of B")
    const { response: accepted } = await clientA.session.promptAsync({
      sessionID: root.id,
      parts: [{ type: "text", text: "again" }],
    })
    await eventsA.until(idleOf(root.id), "session.idle of A")
    const types = typesOf(eventsA.seen)
    const ok = response.status === 204 && accepted.status === 204 &&
      types.includes("message.part.updated") && types.includes("session.status")
    return [ok, `statuses ${response.status}/${accepted.status}, types ${types.join(",")}`]
  })
  await check("events.scoped_by_directory", async () => {
    const leakedToA = eventsA.seen.filter((e) => e.properties?.sessionID === other.id).length
    const leakedToB = eventsB.seen.filter((e) => e.properties?.sessionID === root.id).length
    return [leakedToA === 0 && leakedToB === 0, `B events on A: ${leakedToA}, A events on B: ${leakedToB}`]
  })
  eventsA.close()
  eventsB.close()
  await check("session.messages", async () => {
    const { data } = await clientA.session.messages({ sessionID: root.id })
    const roles = (data ?? []).map((m) => m.info.role).join(",")
    return [roles === "user,assistant,user,assistant", roles]
  })
}

/// A turn that asks (the agent runs with the `Decide` or `AskQuestion` fault): waits for the
/// request, answers it through `answer`, and returns the turn's assistant messages once the
/// session was idle `idles` times (an abort makes the real server idle twice: at once, then
/// after the message completed with its error).
async function askingTurn(kind, answer, idles = 1) {
  const { data: session } = await clientA.session.create({ title: kind })
  const events = await listen(clientA)
  try {
    await clientA.session.promptAsync({ sessionID: session.id, parts: [{ type: "text", text: "go" }] })
    const asked = await events.until((e) => e.type === `${kind}.asked`, `${kind}.asked`)
    await answer(asked.properties, session)
    for (let idle = 0; idle < idles; idle++) {
      await events.until(idleOf(session.id), "session.idle")
    }
    const { data } = await clientA.session.messages({ sessionID: session.id })
    // The turn's assistant messages: as on the real server, a tool call ends its step and the
    // turn goes on in a new message.
    return data.filter((m) => m.info.role === "assistant")
  } finally {
    events.close()
  }
}

async function permission() {
  await check("permission.asked_listed_replied", async () => {
    let listed = 0
    let replied
    const turn = await askingTurn("permission", async (request) => {
      const { data } = await clientA.permission.list()
      listed = (data ?? []).filter((p) => p.id === request.id).length
      replied = await clientA.permission.reply({ requestID: request.id, reply: "once" })
    })
    const tool = turn.flatMap((m) => m.parts).find((p) => p.type === "tool")
    const ok = listed === 1 && replied.data === true && tool?.state?.status === "completed" &&
      turn.every((m) => !m.info.error)
    return [ok, `listed ${listed}, reply ${JSON.stringify(replied?.data)}, tool ${tool?.state?.status}`]
  })
}

async function question() {
  await check("question.asked_answered", async () => {
    let listed = 0
    let replied
    const turn = await askingTurn("question", async (request) => {
      const { data } = await clientA.question.list()
      listed = (data ?? []).filter((q) => q.id === request.id).length
      replied = await clientA.question.reply({ requestID: request.id, answers: [["A"]] })
    })
    const reply = text(turn.at(-1).parts)
    return [listed === 1 && replied.data === true && reply === "Answered: A",
      `listed ${listed}, reply ${JSON.stringify(reply)}`]
  })
}

async function abort() {
  await check("session.abort", async () => {
    let aborted
    const turn = await askingTurn("permission", async (_request, session) => {
      aborted = await clientA.session.abort({ sessionID: session.id })
    }, 2)
    const name = turn.at(-1).info.error?.name
    return [aborted.data === true && name === "MessageAbortedError", `error ${name}`]
  })
}

/// The package's default (v1) client: `{path, query, body}` requests, the header directory.
async function v1() {
  const client = createLegacyClient({ baseUrl, directory: dirA })
  let session
  await check("v1.session.create", async () => {
    const { data } = await client.session.create({ body: { title: "legacy" } })
    session = data
    return [data?.id?.startsWith("ses") && data.directory === dirA, `title ${data?.title}`]
  })
  await check("v1.session.get_and_list", async () => {
    const { data } = await client.session.get({ path: { id: session.id } })
    const { data: list } = await client.session.list()
    return [data?.id === session.id && list?.some((s) => s.id === session.id), `${list?.length} sessions`]
  })
  await check("v1.session.prompt", async () => {
    const { data } = await client.session.prompt({
      path: { id: session.id },
      body: { parts: [{ type: "text", text: "hello" }] },
    })
    return [text(data?.parts) === "Fixture completed.", `reply ${JSON.stringify(text(data?.parts))}`]
  })
}

const phases = { basics, permission, question, abort, v1 }
if (!phases[phase]) {
  report("usage", false, `unknown phase ${phase}; one of ${Object.keys(phases).join(", ")}`)
  process.exit(2)
}
await phases[phase]()
process.exit(0)
