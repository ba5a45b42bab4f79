// A product written in TypeScript's world: a Node script on the official SDK (@opencode-ai/sdk,
// its v2 client). It asks the agent one question in a session of its own, approves the agent's
// reads and rejects anything else, and prints one JSON line with the outcome:
//   {"outcome": "completed" | "failed", "text": ..., "asks": [[permission, reply], ...]}
// It exits 0 when the turn completed, 1 otherwise.
//
// The agent's URL and workspace come from the environment, as the live harness sets them for a
// product it starts: LIVE_AGENT_URL (the forwarder in front of the agent) and
// LIVE_AGENT_DIRECTORY. PRODUCT_PROMPT is the question; PRODUCT_CEILING_MS bounds every wait.
import { createOpencodeClient } from "@opencode-ai/sdk/v2"

const baseUrl = process.env.LIVE_AGENT_URL
const directory = process.env.LIVE_AGENT_DIRECTORY
const prompt = process.env.PRODUCT_PROMPT || "What do my notes say?"
const CEILING_MS = Number(process.env.PRODUCT_CEILING_MS || 60000)
const READS = new Set(["read", "glob", "grep", "list"])

function finish(outcome, fields, code) {
  console.log(JSON.stringify({ outcome, ...fields }))
  process.exit(code)
}

if (!baseUrl || !directory) {
  finish("failed", { reason: "LIVE_AGENT_URL and LIVE_AGENT_DIRECTORY must be set" }, 2)
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

const client = createOpencodeClient({ baseUrl, directory })
const asks = []

async function main() {
  const { data: session } = await within("creating a session", client.session.create({ title: "node product" }))
  // Subscribe before prompting: nothing is replayed.
  const controller = new AbortController()
  const { stream } = await client.event.subscribe({}, { signal: controller.signal, sseMaxRetryAttempts: 0 })
  const events = stream[Symbol.asyncIterator]()
  const first = await within("server.connected", events.next())
  if (first.value?.type !== "server.connected") throw new Error(`first event was ${first.value?.type}`)

  await within("posting the prompt", client.session.promptAsync({
    sessionID: session.id,
    parts: [{ type: "text", text: prompt }],
  }))

  let busy = false
  for (;;) {
    const { value: event, done } = await within("the turn's events", events.next())
    if (done) throw new Error("the event stream ended before the session went idle")
    const props = event.properties ?? {}
    if (props.sessionID !== session.id) continue
    if (event.type === "session.status" && props.status?.type !== "idle") busy = true
    if (event.type === "permission.asked") {
      const reply = READS.has(props.permission) ? "once" : "reject"
      asks.push([props.permission, reply])
      await within("replying", client.permission.reply({ requestID: props.id, reply }))
    }
    if (event.type === "session.idle" && busy) break
  }
  controller.abort()

  const { data: messages } = await within("reading messages", client.session.messages({ sessionID: session.id }))
  const last = messages.at(-1)
  const text = (last?.parts ?? []).filter((p) => p.type === "text").map((p) => p.text).join("")
  if (last?.info?.role !== "assistant" || last.info.error) {
    finish("failed", { reason: last?.info?.error?.name ?? "no answer", asks }, 1)
  }
  finish("completed", { text, asks }, 0)
}

main().catch((error) => finish("failed", { reason: String(error?.message ?? error), asks }, 1))
