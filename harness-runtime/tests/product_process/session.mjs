// A product on the official SDK (@opencode-ai/sdk, its v2 client): creates a session in its agent
// through LIVE_AGENT_URL and LIVE_AGENT_DIRECTORY, lists it back, writes in its workspace and
// tries to read the file named by its first argument, outside everything it was given. One line
// per fact; exits 2 when the agent refused a request.
import { createOpencodeClient } from "@opencode-ai/sdk/v2"
import { readFileSync, writeFileSync } from "node:fs"

const client = createOpencodeClient({
  baseUrl: process.env.LIVE_AGENT_URL,
  directory: process.env.LIVE_AGENT_DIRECTORY,
})

const created = await client.session.create({ title: "made by the product" })
if (!created.data) {
  console.error(`session.create failed: ${created.response?.status} ${JSON.stringify(created.error)}`)
  process.exit(2)
}
console.log(`created: ${created.data.title}`)
const listed = await client.session.list()
console.log(`listed: ${(listed.data ?? []).map((s) => s.title).join(", ")}`)

writeFileSync("product.txt", "written by the product\n")
console.log("wrote its workspace")
try {
  readFileSync(process.argv[2])
  console.log("outside: read")
} catch (error) {
  console.log(`outside: ${error.code}`)
}
