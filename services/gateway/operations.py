"""Every operation's id, tag and the error codes it can answer, in one table.

A client's SDK is generated from these names (`operationId` becomes a function, a tag a
module), so they are chosen together and read as one vocabulary: verbs first, the thing
after (`createTable`, `makeMove`, `streamTableEvents`). Each blueprint keeps its summaries,
parameters, bodies and success replies beside its routes; `openapi.document` adds from
here the error replies (one per status, the codes it can carry enumerated in words and in
`x-error-codes`), and what every write shares (Idempotency-Key, the 409/422 of a retry, the
rate limit's 429 and RateLimit-* headers). `tests/gateway/test_openapi.py` checks that
every operation is here, that every code raised in the source is in `CODES` under the
status it is raised with, and that each error a generated request meets is one its
operation lists.
"""

from __future__ import annotations

# code -> (HTTP status, what it means to a client). New codes may be added within v1
# (docs/client-guide.md: clients treat an unknown code by its status).
CODES: dict[str, tuple[int, str]] = {
    "malformed": (
        400,
        "the body, a query parameter or a header is not what the operation takes; `field` names it",
    ),
    "illegal_action": (400, "the engine refuses the action now (its reason in words), or the game is over"),
    "invalid_argument": (400, "the engine refuses the config or table size (its reason in words)"),
    "invalid_players": (400, "the game does not take that many players"),
    "invalid_config": (400, "a config field is unknown or has the wrong type"),
    "config_limit": (400, "a config value is outside the game's bounds (config_limits)"),
    "invalid_bot": (400, "a bot's parameters are malformed"),
    "invalid_bots": (400, "the bot line-up does not fit the table"),
    "unknown_bot": (400, "no such bot for this game"),
    "bot_limit": (400, "a bot parameter is over its bound (docs/security.md)"),
    "table_bot_budget": (
        400,
        "the table's bots together search more per decision than a table may (docs/security.md)",
    ),
    "bot_only_search": (
        403,
        "a table of bots only opened by a guest or anonymous client seats cheap bots only (docs/security.md)",
    ),
    "state_too_large": (400, "the config or move would make a state larger than tables hold"),
    "invalid_spec": (400, "the sweep or tune spec cannot run (a field it names)"),
    "too_long": (400, "the replay asked for is longer than the gateway rebuilds"),
    "token_required": (401, "the seat's (or ticket's) token is missing"),
    "sign_in_required": (
        401,
        "a player session (X-Player-Token) is needed: the seat or ticket is bound to one",
    ),
    "session_expired": (401, "the player session sent expired or was revoked"),
    "bad_credentials": (401, "unknown username or wrong password"),
    "weak_password": (400, "the new password is too short or too easy to guess (`message` says why)"),
    "invalid_ticket": (401, "the stream ticket is unknown, used or expired: ask for a new one"),
    "cross_site": (403, "a browser page of another site sent this write (Origin / Sec-Fetch-Site)"),
    "forbidden": (403, "the player lacks the role the operation needs (`role` names it)"),
    "over_quota": (403, "the spec could never fit the designer's quotas (`quota` and `limit` name the one)"),
    "not_owner": (403, "only the sweep's or tune's owner, or an operator, may do that"),
    "wrong_token": (403, "the token holds no such seat or ticket"),
    "other_player": (403, "the seat or ticket belongs to another player"),
    "unknown_game": (404, "no such game"),
    "unknown_player": (404, "no such account (`cultists admin grant`; no route answers it)"),
    "unknown_table": (404, "no such table (or it expired)"),
    "unknown_seat": (404, "the table has no such seat"),
    "unknown_ticket": (404, "no such matchmaking ticket"),
    "unknown_step": (404, "the replay has no such step"),
    "unknown_card": (404, "the game has no such card (a card picture's name or suit)"),
    "not_found": (404, "no such sweep, tune, cell or plot, or a path parameter the route does not take"),
    "stale_version": (
        409,
        "the table moved on; `version` is the current one: read the state and choose again",
    ),
    "not_started": (409, "the game starts when every human seat is taken"),
    "not_finished": (409, "the replay record is given once the game is over"),
    "no_records": (409, "the finished card ablation kept no per-game records to report from"),
    "not_waiting": (409, "seats are taken before the start only"),
    "seat_taken": (409, "someone holds that seat (your own player: reissue its token)"),
    "bot_seat": (409, "a bot plays that seat"),
    "already_seated": (409, "you hold another seat of this rated table"),
    "already_queued": (409, "the player already has a queued ticket"),
    "not_queued": (409, "the ticket is matched or cancelled already"),
    "finished": (409, "the game, sweep or tune is over already"),
    "cancelled": (409, "the sweep or tune was cancelled"),
    "failed": (409, "the sweep or tune failed (`message` says why)"),
    "not_guest": (409, "the player has a username already"),
    "not_account": (409, "a guest has no password to change: upgrade first"),
    "username_taken": (409, "that username is taken"),
    "upgraded": (409, "this device's player has a username: sign in with it"),
    "replay_mismatch": (409, "the record does not rebuild to the game it claims"),
    "idempotency_in_progress": (
        409,
        "a request with this Idempotency-Key is still running: retry after Retry-After",
    ),
    "request_entity_too_large": (413, "the body is over the gateway's limit (64 KiB)"),
    "request_line_too_long": (414, "the request line is over the API's limit (4,094 bytes)"),
    "headers_too_large": (431, "a header field is over the API's limit (8,190 bytes), or there are over 100"),
    "idempotency_key_reused": (422, "this Idempotency-Key was used for a different body"),
    "rate_limited": (429, "too many writes from this player or address: wait Retry-After"),
    "quota_exceeded": (
        429,
        "the designer's sweeps, tunes or games in flight are at their quota (`quota`, `limit`): wait Retry-After",
    ),
    "too_many_tables": (429, "the player (or address) already holds its most waiting tables"),
    "login_throttled": (429, "too many failed sign-ins to this account: wait Retry-After"),
    "chat_limited": (429, "too many chat messages from this seat: wait Retry-After"),
    "move_limited": (429, "too many moves from this seat at this decision: wait for the table to move on"),
    "engine_error": (502, "the game's engine failed in an unexpected way"),
    "engine_unavailable": (503, "the game's engine is not answering: retry after Retry-After"),
    "store_unavailable": (503, "the table store is not answering: retry after Retry-After"),
    "busy": (503, "every slot for long work is taken: retry after Retry-After"),
    "too_many_streams": (
        503,
        "this gateway process holds as many streams as it may: retry after Retry-After",
    ),
    "shutting_down": (503, "this gateway process is stopping: reconnect (another process answers)"),
    "too_slow": (503, "the rebuild took longer than its bound"),
    # Answered by the pages' and /ops' data routes (not under /api), listed so every code
    # the gateway answers has one meaning.
    "unknown_version": (404, "the table has no such version (a page's history)"),
    "unknown_panel": (404, "no such dashboard panel"),
    "prometheus_unavailable": (502, "Prometheus did not answer the dashboards' query"),
    "no_prometheus": (503, "no Prometheus is configured for the dashboards"),
}

SEAT_AUTH = ("token_required", "sign_in_required", "session_expired", "wrong_token", "other_player")
SESSION = ("sign_in_required", "session_expired")
BODY = ("malformed", "request_entity_too_large")
ENGINE = ("engine_unavailable", "engine_error")
TABLE_OPEN = (
    "unknown_game", "invalid_players", "invalid_bot", "unknown_bot", "bot_limit", "invalid_config",
    "config_limit", "invalid_argument", "state_too_large", "table_bot_budget",
)  # fmt: skip
# A replay is rebuilt by the rules library in the gateway (pages/replay.py), no engine
# asked, so a config the rules refuse is `invalid_config`; a bot over its bounds is the
# lobby's `bot_limit` (bounds.check_bot).
REPLAY = (
    "malformed", "unknown_game", "unknown_table", "invalid_players", "invalid_bots", "bot_limit",
    "invalid_config", "too_long", "unknown_step", "unknown_seat", "replay_mismatch", "not_finished",
    "too_slow", "busy", *ENGINE,
)  # fmt: skip
# Designer routes: a session of an account with the designer (or operator) role.
DESIGNER = (*SESSION, "forbidden")
SWEEP = ("not_found", *DESIGNER)
QUOTA = ("over_quota", "quota_exceeded")
SPEC = (*BODY, "invalid_spec", "invalid_bot", "unknown_bot", "bot_limit")
FINISHED_WORK = ("not_found", "cancelled", "failed", *DESIGNER)

# Written into every write's error list (openapi.document): a malformed Idempotency-Key,
# a retry while the first attempt runs, a key reused for another body, a write another
# site's page sent (csrf.py).
WRITE_CODES = ("malformed", "idempotency_in_progress", "idempotency_key_reused", "cross_site")
# Every operation reads Redis, and every request's head is bounded (request_bounds.py).
EVERY_CODES = ("store_unavailable", "request_line_too_long", "headers_too_large")
# An operation with path parameters: a value its route does not take (a negative seat)
# matches no route.
PATH_CODES = ("not_found",)

# (method, documented path) -> (operationId, tag, error codes beyond WRITE_CODES / EVERY_CODES)
OPERATIONS: dict[tuple[str, str], tuple[str, str, tuple[str, ...]]] = {
    ("get", "/api/openapi.json"): ("getOpenApiDocument", "ops", ()),
    ("get", "/api/games"): ("listGames", "lobby", ENGINE),
    ("get", "/api/games/{game}"): ("getGame", "lobby", ("unknown_game", *ENGINE)),
    ("get", "/api/tables"): ("listTables", "lobby", ("malformed", "unknown_game", *ENGINE)),
    ("post", "/api/tables"): (
        "createTable",
        "lobby",
        (
            *BODY,
            *TABLE_OPEN,
            *ENGINE,
            "bot_only_search",
            "session_expired",
            "too_many_tables",
            "rate_limited",
        ),
    ),
    ("get", "/api/tables/{table_id}"): ("getTable", "lobby", ("unknown_table", *ENGINE)),
    ("get", "/api/tables/{table_id}/seats/{seat}"): ("getSeat", "lobby", ("unknown_table", "unknown_seat")),
    ("post", "/api/tables/{table_id}/seats/{seat}"): (
        "joinSeat",
        "lobby",
        (
            *BODY,
            "unknown_table",
            "unknown_seat",
            *SESSION,
            "already_seated",
            "not_waiting",
            "bot_seat",
            "seat_taken",
            "rate_limited",
        ),
    ),
    ("delete", "/api/tables/{table_id}/seats/{seat}"): (
        "leaveSeat",
        "lobby",
        (*SEAT_AUTH, "unknown_table", "unknown_seat", "finished", "rate_limited"),
    ),
    ("post", "/api/tables/{table_id}/seats/{seat}/token"): (
        "reissueSeatToken",
        "lobby",
        ("unknown_table", "unknown_seat", *SESSION, "other_player", "finished", "bot_seat", "rate_limited"),
    ),
    ("get", "/api/tables/{table_id}/view"): ("getView", "matches", (*SEAT_AUTH, "unknown_table", *ENGINE)),
    ("get", "/api/tables/{table_id}/legal"): ("getLegal", "matches", (*SEAT_AUTH, "unknown_table", *ENGINE)),
    ("post", "/api/tables/{table_id}/actions"): (
        "makeMove",
        "matches",
        (
            *SEAT_AUTH,
            *BODY,
            "unknown_table",
            "illegal_action",
            "state_too_large",
            "stale_version",
            "not_started",
            "move_limited",
            *ENGINE,
        ),
    ),
    ("post", "/api/tables/{table_id}/chat"): (
        "sayInTableChat",
        "matches",
        (*SEAT_AUTH, *BODY, "unknown_table", "chat_limited"),
    ),
    ("get", "/api/tables/{table_id}/chat"): ("listTableChat", "matches", ("malformed", "unknown_table")),
    ("post", "/api/tables/{table_id}/stream-ticket"): (
        "createTableStreamTicket",
        "matches",
        (*SEAT_AUTH, "unknown_table", "rate_limited"),
    ),
    ("get", "/api/tables/{table_id}/events"): ("listTableEvents", "matches", ("malformed", "unknown_table")),
    ("get", "/api/tables/{table_id}/events/stream"): (
        "streamTableEvents",
        "matches",
        (
            "malformed",
            *SEAT_AUTH,
            "invalid_ticket",
            "unknown_table",
            "too_many_streams",
            "shutting_down",
            *ENGINE,
        ),
    ),
    ("get", "/api/tables/{table_id}/replay"): ("getReplay", "matches", ("unknown_table", "not_finished")),
    ("post", "/api/matchmaking/tickets"): (
        "enqueueTicket",
        "matchmaking",
        (
            *SESSION,
            *BODY,
            "unknown_game",
            "invalid_players",
            "invalid_argument",
            "already_queued",
            *ENGINE,
            "rate_limited",
        ),
    ),
    ("get", "/api/matchmaking/tickets/{ticket_id}"): (
        "getTicket",
        "matchmaking",
        (*SEAT_AUTH, "unknown_ticket"),
    ),
    ("delete", "/api/matchmaking/tickets/{ticket_id}"): (
        "cancelTicket",
        "matchmaking",
        (*SEAT_AUTH, "unknown_ticket", "not_queued", "rate_limited"),
    ),
    ("post", "/api/matchmaking/tickets/{ticket_id}/stream-ticket"): (
        "createTicketStreamTicket",
        "matchmaking",
        (*SEAT_AUTH, "unknown_ticket", "rate_limited"),
    ),
    ("get", "/api/matchmaking/tickets/{ticket_id}/stream"): (
        "streamTicket",
        "matchmaking",
        ("malformed", *SEAT_AUTH, "invalid_ticket", "unknown_ticket", "too_many_streams", "shutting_down"),
    ),
    ("get", "/api/matchmaking/ratings/{game}/{player}"): (
        "getRating",
        "matchmaking",
        ("unknown_game", *ENGINE),
    ),
    ("post", "/api/players/guest"): ("signInGuest", "players", (*BODY, "upgraded", "rate_limited")),
    ("get", "/api/players/me"): ("getMe", "players", SESSION),
    ("patch", "/api/players/me"): ("renameMe", "players", (*SESSION, *BODY, "rate_limited")),
    ("post", "/api/players/me/upgrade"): (
        "upgradeMe",
        "players",
        (*SESSION, *BODY, "weak_password", "not_guest", "username_taken", "busy", "rate_limited"),
    ),
    ("post", "/api/players/me/password"): (
        "changeMyPassword",
        "players",
        (
            *SESSION,
            *BODY,
            "bad_credentials",
            "weak_password",
            "not_account",
            "login_throttled",
            "rate_limited",
        ),
    ),
    ("post", "/api/sessions"): (
        "signIn",
        "players",
        (*BODY, "bad_credentials", "login_throttled", "busy", "rate_limited"),
    ),
    ("delete", "/api/sessions"): ("signOutEverywhere", "players", (*SESSION, "rate_limited")),
    ("delete", "/api/sessions/current"): ("signOut", "players", (*SESSION, "rate_limited")),
    ("get", "/api/replays"): ("getReplaySummary", "replays", REPLAY),
    ("get", "/api/replays/steps/{step}"): ("getReplayStep", "replays", REPLAY),
    ("post", "/api/sweeps"): ("submitSweep", "sweeps", (*SPEC, *DESIGNER, *QUOTA, "rate_limited")),
    ("get", "/api/sweeps"): ("listSweeps", "sweeps", ("malformed", *DESIGNER)),
    ("get", "/api/sweeps/{sweep_id}"): ("getSweep", "sweeps", SWEEP),
    ("post", "/api/sweeps/{sweep_id}/cancel"): (
        "cancelSweep",
        "sweeps",
        (*SWEEP, "not_owner", "finished", "rate_limited"),
    ),
    ("get", "/api/sweeps/{sweep_id}/result"): ("getSweepResult", "sweeps", FINISHED_WORK),
    ("get", "/api/sweeps/{sweep_id}/report"): ("getSweepReport", "sweeps", (*FINISHED_WORK, "busy")),
    ("get", "/api/sweeps/{sweep_id}/replays/cell-{cell}.json"): ("getSweepCellReplay", "sweeps", SWEEP),
    ("post", "/api/cards"): ("submitCardAblation", "sweeps", (*SPEC, *DESIGNER, *QUOTA, "rate_limited")),
    ("get", "/api/cards/{ablation_id}"): ("getCardAblation", "sweeps", (*FINISHED_WORK, "no_records")),
    ("post", "/api/tunes"): ("submitTune", "tunes", (*SPEC, *DESIGNER, *QUOTA, "rate_limited")),
    ("get", "/api/tunes"): ("listTunes", "tunes", ("malformed", *DESIGNER)),
    ("get", "/api/tunes/{tune_id}"): ("getTune", "tunes", ("not_found", *DESIGNER)),
    ("post", "/api/tunes/{tune_id}/cancel"): (
        "cancelTune",
        "tunes",
        ("not_found", *DESIGNER, "not_owner", "finished", "rate_limited"),
    ),
    ("get", "/api/tunes/{tune_id}/report"): ("getTuneReport", "tunes", (*FINISHED_WORK, "busy")),
    ("get", "/api/tunes/{tune_id}/plots/{name}"): ("getTunePlot", "tunes", ("not_found", *DESIGNER)),
}

TAGS = [
    {"name": "lobby", "description": "Games on offer, tables, seats"},
    {"name": "matches", "description": "Playing a table: its state, moves, the event log and stream"},
    {"name": "matchmaking", "description": "Queueing for rated tables; ratings"},
    {"name": "players", "description": "Guest players, accounts, sessions"},
    {"name": "replays", "description": "Finished games rebuilt step by step"},
    {"name": "sweeps", "description": "Balance sweeps (designers)"},
    {"name": "tunes", "description": "Balance tunes (designers)"},
    {"name": "ops", "description": "The document itself"},
]
