// The load generator of `python -m bench peer` against server.js, with the Colyseus client SDK:
// the same pacing as bench/load.py.
//
//     node load.js --url ws://127.0.0.1:PORT [--rooms 100] [--seconds 10] [--warmup 2]
//                  [--think 1.0] [--seed 1] [--samples]
//
// It opens `--rooms` rooms of four clients (one creates the room, three join it by id), waits
// until every member has the state of a full room, then drives each room: the player to act
// (the state's `turn`) waits a think time (0.5–1.5 × --think; a room's first action also
// waits a random part of one think, so rooms do not act in step) and sends "act", and waits
// for its `ok` (the round trip) and for the new state (the version `ok` names) at every
// member of the room (the broadcast, at its last member). With --think 0 (saturated) the next
// player acts as soon as that is over. Only actions started inside the `--seconds` after
// `--warmup` are counted; every wait has a timeout (10 s), and a room that times out stops
// being driven.
//
// Bytes: every member counts the payload bytes of each frame its websocket receives inside
// the window (replies and patches; frame headers, like bench/load.py's, not counted).
//
// On stderr it writes `measuring` when the window opens and `measured` when it closes (so the
// caller can read the server's CPU then); on stdout, at the end, one JSON line: actions, the
// round trip's and the broadcast's p50/p99 in ms, bytes received per action (by the four
// members of a room), errors (refusals), timeouts, this process's CPU seconds in the window,
// and with --samples every round trip and broadcast in ms.
"use strict";

const { Client } = require("@colyseus/sdk");

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}

const URL_ = option("url", "");
const ROOMS = Math.max(1, Number(option("rooms", "100")));
const SECONDS = Math.max(0.1, Number(option("seconds", "10")));
const WARMUP = Math.max(0, Number(option("warmup", "2")));
const THINK = Math.max(0, Number(option("think", "1.0")));
const SEED = Number(option("seed", "1"));
const SAMPLES = process.argv.includes("--samples");
const WAIT = 10000; // ms any one reply, patch or setup step may take
const CONNECT_AT_ONCE = 32; // rooms set up at once

if (!URL_.startsWith("ws://")) {
  process.stderr.write("usage: node load.js --url ws://HOST:PORT [--rooms N] ...\n");
  process.exit(2);
}

const now = () => performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function rng(seed) {
  let s = (seed * 2654435761) >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

class Timeout extends Error {}

function within(ms, promise) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Timeout()), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

function size(data) {
  if (typeof data === "string") return Buffer.byteLength(data);
  if (data && typeof data.byteLength === "number") return data.byteLength;
  if (Array.isArray(data)) return data.reduce((n, part) => n + part.length, 0);
  return 0;
}

/** One client in one room: its latest version, its one outstanding request. */
class Member {
  constructor(room) {
    this.room = room;
    this.version = -1;
    this.received = 0;
    this.reply = null;
    this.want = null;
    const ws = room.connection.transport.ws;
    ws.addEventListener("message", (event) => { this.received += size(event.data); });
    const answer = (kind) => (message) => {
      const reply = this.reply;
      this.reply = null;
      if (reply) reply({ kind, message, at: now() });
    };
    room.onMessage("ok", answer("ok"));
    room.onMessage("error", answer("error"));
    room.onStateChange((state) => {
      const at = now();
      if (state.version > this.version) this.version = state.version;
      const want = this.want;
      if (want && this.version >= want.version) {
        this.want = null;
        want.resolve(at);
      }
    });
  }

  get state() { return this.room.state; }

  get seat() {
    const players = this.state && this.state.players;
    if (!players) return -1;
    for (const player of players) {
      if (player.session === this.room.sessionId) return player.seat;
    }
    return -1;
  }

  /** A promise of the arrival time of the first state at `version` or later. */
  expect(version) {
    return new Promise((resolve) => {
      if (this.version >= version) resolve(now());
      else this.want = { version, resolve };
    });
  }

  /** Send "act"; the promise is of {kind, message, at}. */
  act(fields) {
    const reply = new Promise((resolve) => { this.reply = resolve; });
    this.room.send("act", fields);
    return reply;
  }

  async close() {
    try { await within(WAIT, this.room.leave(true)); } catch { /* gone already */ }
  }
}

const stats = { rtt: [], broadcast: [], errors: 0, timeouts: 0 };
let windowStart = Infinity;
let windowEnd = Infinity;

function record(start, rtt, broadcast) {
  if (windowStart <= start && start < windowEnd) {
    stats.rtt.push(rtt);
    stats.broadcast.push(broadcast);
  }
}

async function openRoom(client, index) {
  const first = await within(WAIT, client.create("castell", { index }));
  const others = [];
  for (let k = 0; k < 3; k++) others.push(await within(WAIT, client.joinById(first.roomId)));
  const members = [first, ...others].map((room) => new Member(room));
  const deadline = now() + WAIT;
  while (!members.every((m) => m.state && m.state.status === "playing" && m.seat >= 0)) {
    if (now() > deadline) throw new Timeout();
    await sleep(5);
  }
  members.sort((a, b) => a.seat - b.seat);
  return { index, members, random: rng(SEED * 100003 + index) };
}

async function openRooms(client) {
  const out = new Array(ROOMS);
  let next = 0;
  async function worker() {
    while (next < ROOMS) {
      const i = next++;
      out[i] = await openRoom(client, i);
    }
  }
  await Promise.all(Array.from({ length: Math.min(CONNECT_AT_ONCE, ROOMS) }, worker));
  return out;
}

async function drive(room, stop) {
  const { members, random } = room;
  const think = THINK * 1000;
  if (think) await sleep(random() * think);
  for (;;) {
    if (think) await sleep(think * (0.5 + random()));
    if (now() >= stop) return;
    const state = members[0].state;
    const actor = members[state.turn];
    const here = state.players.at(state.turn).region;
    const regions = [...state.regions.keys()].filter((code) => code !== here);
    const fields = { region: regions[Math.floor(random() * regions.length)] };
    const target = Math.max(...members.map((m) => m.version)) + 1;
    const arrivals = members.map((m) => m.expect(target));
    let start;
    try {
      start = now();
      const reply = await within(WAIT, actor.act(fields));
      if (reply.kind === "error") {
        stats.errors += 1;
        for (const m of members) m.want = null;
        continue;
      }
      const last = Math.max(...await within(WAIT, Promise.all(arrivals)));
      record(start, reply.at - start, last - start);
    } catch (error) {
      if (!(error instanceof Timeout)) throw error;
      stats.timeouts += 1;
      return;
    }
  }
}

function percentile(ordered, fraction) {
  // the nearest rank, as bench.common.percentile
  if (!ordered.length) return 0;
  return ordered[Math.min(ordered.length - 1, Math.round(fraction * (ordered.length - 1)))];
}

async function main() {
  const client = new Client(URL_.replace(/^ws:/, "http:"));
  const rooms = await openRooms(client);
  const received = () => rooms.reduce(
    (n, room) => n + room.members.reduce((k, m) => k + m.received, 0), 0);
  windowStart = now() + WARMUP * 1000;
  windowEnd = windowStart + SECONDS * 1000;
  const tasks = rooms.map((room) => drive(room, windowEnd));
  await sleep(Math.max(0, windowStart - now()));
  process.stderr.write("measuring\n");
  const cpu0 = process.cpuUsage();
  const bytes0 = received();
  await sleep(Math.max(0, windowEnd - now()));
  process.stderr.write("measured\n");
  const cpu1 = process.cpuUsage(cpu0);
  const bytes1 = received();
  await within(WAIT + THINK * 2000 + 5000, Promise.all(tasks));
  await Promise.all(rooms.flatMap((room) => room.members.map((m) => m.close())));
  const round = (ms) => Math.round(ms * 1000) / 1000;
  const rtt = [...stats.rtt].sort((a, b) => a - b);
  const broadcast = [...stats.broadcast].sort((a, b) => a - b);
  const actions = stats.rtt.length;
  const out = {
    rooms: ROOMS,
    seconds: SECONDS,
    think: THINK,
    actions,
    rtt_p50_ms: round(percentile(rtt, 0.5)),
    rtt_p99_ms: round(percentile(rtt, 0.99)),
    broadcast_p50_ms: round(percentile(broadcast, 0.5)),
    broadcast_p99_ms: round(percentile(broadcast, 0.99)),
    received: bytes1 - bytes0,
    bytes_per_action: actions ? Math.round((bytes1 - bytes0) / actions) : 0,
    bytes_counted: "payload of every frame each member's websocket received",
    errors: stats.errors,
    timeouts: stats.timeouts,
    load_cpu: (cpu1.user + cpu1.system) / 1e6,
  };
  if (SAMPLES) {
    out.rtt_ms = stats.rtt.map(round);
    out.broadcast_ms = stats.broadcast.map(round);
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().then(() => process.exit(0), (error) => {
  process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
