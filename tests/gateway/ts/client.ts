// A browser client's loop, written against the types openapi-typescript generates from the
// served document (api.d.ts, made by tests/gateway/test_generated_clients.py). `tsc --strict`
// checking this file is the proof that the document types what a publisher's client needs:
// the stream ticket, the stream's state and log, the move and its answer (its events typed by
// the game beside them), and the error shape.
import type { components, operations, paths } from "./api";

type Schemas = components["schemas"];
type StreamState = Schemas["StreamState"];
type MoveResult = Schemas["MoveResult"];
type LogEvent = Schemas["LogEvent"];
type ApiError = Schemas["Error"];
type ErrorCode = Schemas["ErrorCode"];

const MOVE: keyof paths = "/api/v1/tables/{table_id}/actions";
const TICKET: keyof paths = "/api/v1/tables/{table_id}/stream-ticket";

type MoveBody = operations["makeMove"]["requestBody"] extends { content: { "application/json": infer B } } ? B : never;

function retryable(code: ErrorCode): boolean {
  return code === "stale_version" || code === "idempotency_in_progress" || code === "engine_unavailable";
}

async function move(base: string, table: string, token: string, body: MoveBody): Promise<MoveResult | ApiError> {
  const reply = await fetch(base + MOVE.replace("{table_id}", table), {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Authorization: `Bearer ${token}`,
      "Idempotency-Key": crypto.randomUUID(),
    },
    body: JSON.stringify(body),
  });
  return (await reply.json()) as MoveResult | ApiError;
}

// A move's answer types its events by the game beside them: a Tricky Cultists `trick`
// names its card as an object, with no per-game code.
function tricksPlayed(answer: MoveResult): string[] {
  if (answer.game !== "tricky_cultists") return [];
  const events: Schemas["TrickyCultistsEvent"][] = answer.events; // what `game` narrowed it to
  return events.flatMap((e) => (e.kind === "trick" ? [`${e.payload.card.name} (${e.payload.suit})`] : []));
}

export async function follow(base: string, table: string, token: string, choose: (s: StreamState) => number): Promise<void> {
  const made = await fetch(base + TICKET.replace("{table_id}", table), {
    method: "POST",
    headers: { Authorization: `Bearer ${token}` },
  });
  const ticket = (await made.json()) as Schemas["StreamTicket"];
  const source = new EventSource(base + ticket.url);
  let lastMoved = -1;
  const seen: LogEvent[] = []; // the log, from the stream's `log` events
  const played: string[] = [];
  let lastEvent = -1; // the newest log entry an update carried
  const onState = async (event: MessageEvent<string>): Promise<void> => {
    const state = JSON.parse(event.data) as StreamState;
    lastEvent = state.events?.at(-1)?.id ?? lastEvent;
    if (!state.your_turn || state.version <= lastMoved) return;
    lastMoved = state.version;
    const answer = await move(base, table, token, { action: choose(state), version: state.version });
    if ("error" in answer) {
      if (!retryable(answer.error.code)) source.close();
      return;
    }
    played.push(...tricksPlayed(answer));
  };
  source.addEventListener("state", (e) => void onState(e as MessageEvent<string>));
  source.addEventListener("update", (e) => void onState(e as MessageEvent<string>));
  source.addEventListener("log", (e) => seen.push(JSON.parse((e as MessageEvent<string>).data) as LogEvent));
  source.addEventListener("end", () => source.close());
}
