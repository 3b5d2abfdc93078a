// The Colyseus peer of `python -m bench peer`: one room type, "castell", whose schema state is
// about the size and shape of a mid-game Castell view, and one message, "act", that changes a
// few fields the way one Castell action does.
//
//     node server.js [--host 127.0.0.1] [--port 0] [--patch-rate 0]
//
// It announces `colyseus server listening on ws://HOST:PORT` on its first line of stdout, as
// castell-server and bench/bare.py do, and stops on SIGTERM or SIGINT.
//
// A room holds four clients (maxClients 4). Its state: a round and turn counter, a version
// (one per action, as Castell's), four players each with a few numbers and small arrays, a
// board of 12 regions each with a few fields, and a log of the last 5 events. "act" from the
// player to act (anyone else is refused with an "error" message, as Castell refuses an action
// out of turn) moves that player's pawn to the region it names, takes a casteller from there
// into its team, scores, logs the event and ends the turn (the next seat is to act; after the
// last seat a new round starts). The sender then gets `ok` with the new version, and the
// state's changes go to all four members as Colyseus's own patch. A member joining gets the
// full state in about 1.4 KB (2.5 KB as JSON; a mid-game Castell view is 2.2 KB of
// MessagePack, 3.3 KB as JSON); one action costs a room about 290 B: a 65–70 B patch to each
// member and the actor's 22 B `ok`.
//
// --patch-rate: 0 (the default) patches right after each action (`broadcastPatch()`), so that
// every member gets every change as one push, the load Castell and the bare server take;
// a number of milliseconds patches on Colyseus's own timer instead (its default is 50 ms),
// which batches the changes of several actions into one patch.
"use strict";

const { Server, Room } = require("@colyseus/core");
const { WebSocketTransport } = require("@colyseus/ws-transport");
const { schema, t } = require("@colyseus/schema");

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}

const HOST = option("host", "127.0.0.1");
const PORT = Number(option("port", "0"));
const PATCH_RATE = Number(option("patch-rate", "0"));

const REGIONS = ["alt", "gir", "cen", "lle", "bcn", "tar", "ebr", "pir", "osn", "gar", "pen",
                 "mar"];
const TOWNS = ["La Seu d'Urgell", "Girona", "Manresa", "Lleida", "Barcelona", "Tarragona",
               "Tortosa", "Puigcerdà", "Solsona", "Olot", "Vilafranca del Penedès", "Mataró"];
const SKILLS = ["balance", "base", "mix", "strength", "width"];
const NAMES = ["Anna", "Biel", "Carme", "Dani"];
const LOG = 5;

const Player = schema({
  seat: t.uint8(),
  name: t.string(),
  session: t.string(),
  connected: t.boolean(),
  region: t.string(),
  score: t.uint16(),
  tokens: t.uint8(),
  best: t.uint8(),
  team: t.array("uint8"),
  tower: t.array("uint8"),
  skills: t.array("uint8"),
}, "Player");

const Region = schema({
  castellers: t.array("uint8"),
  pawns: t.array("uint8"),
  wheel: t.string(),
  tokens: t.uint8(),
  town: t.string(),
  festival: t.uint8(),
}, "Region");

const Event = schema({
  kind: t.string(),
  seat: t.uint8(),
  region: t.string(),
  value: t.uint8(),
}, "Event");

const State = schema({
  status: t.string(),
  round: t.uint8(),
  turn: t.uint8(),
  first: t.uint8(),
  version: t.uint32(),
  bag: t.uint8(),
  players: t.array(Player),
  regions: t.map(Region),
  log: t.array(Event),
}, "State");

// A seeded generator per room, so that rooms differ but a run is the same each time.
function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

let rooms = 0;

class CastellRoom extends Room {
  maxClients = 4;

  onCreate() {
    this.random = rng(++rooms);
    const pick = (n) => Math.floor(this.random() * n);
    const state = new State();
    state.status = "waiting";
    state.round = 5;
    state.turn = 0;
    state.first = 0;
    state.version = 0;
    state.bag = 54;
    for (const [i, code] of REGIONS.entries()) {
      const region = new Region();
      for (let k = 0; k < 5; k++) region.castellers.push(1 + pick(10));
      region.wheel = SKILLS[i % SKILLS.length];
      region.tokens = pick(4);
      region.town = TOWNS[i];
      region.festival = pick(11);
      state.regions.set(code, region);
    }
    for (let k = 0; k < LOG; k++) {
      const event = new Event();
      event.kind = "train";
      event.seat = k % 4;
      event.region = REGIONS[k];
      event.value = k;
      state.log.push(event);
    }
    this.state = state;
    this.patchRate = PATCH_RATE > 0 ? PATCH_RATE : null;
    this.onMessage("act", (client, message) => this.act(client, message));
  }

  onJoin(client) {
    const pick = (n) => Math.floor(this.random() * n);
    const seat = this.state.players.length;
    const player = new Player();
    player.seat = seat;
    player.name = NAMES[seat];
    player.session = client.sessionId;
    player.connected = true;
    player.region = REGIONS[seat];
    player.score = 20 + pick(30);
    player.tokens = pick(4);
    player.best = 0;
    for (let k = 0; k < 12; k++) player.team.push(1 + pick(10));
    for (let k = 0; k < 6; k++) player.tower.push(1 + pick(10));
    for (let k = 0; k < SKILLS.length; k++) player.skills.push(pick(3));
    this.state.players.push(player);
    this.state.regions.get(player.region).pawns.push(seat);
    if (this.state.players.length === this.maxClients) this.state.status = "playing";
    if (this.patchRate === null) this.broadcastPatch();
  }

  onLeave(client) {
    const player = this.state.players.find((p) => p.session === client.sessionId);
    if (player) player.connected = false;
    if (this.patchRate === null) this.broadcastPatch();
  }

  act(client, message) {
    const state = this.state;
    const player = state.players[state.turn];
    const to = message && typeof message.region === "string" ? message.region : "";
    const region = state.regions.get(to);
    if (state.status !== "playing" || !player || player.session !== client.sessionId) {
      client.send("error", { message: "not your turn" });
      return;
    }
    if (region === undefined || to === player.region) {
      client.send("error", { message: "no such move" });
      return;
    }
    // move the pawn
    const from = state.regions.get(player.region);
    const at = from.pawns.indexOf(player.seat);
    if (at >= 0) from.pawns.splice(at, 1);
    region.pawns.push(player.seat);
    player.region = to;
    // take the tallest casteller there into the team (its place refilled from the bag)
    let tallest = 0;
    for (let k = 1; k < region.castellers.length; k++) {
      if (region.castellers[k] > region.castellers[tallest]) tallest = k;
    }
    const size = region.castellers[tallest];
    region.castellers[tallest] = 1 + Math.floor(this.random() * 10);
    player.team.push(size);
    if (player.team.length > 16) player.team.shift();
    state.bag = state.bag > 0 ? state.bag - 1 : 54;
    // score, log, end the turn
    player.score += size;
    if (size > player.best) player.best = size;
    const event = new Event();
    event.kind = "move";
    event.seat = player.seat;
    event.region = to;
    event.value = size;
    state.log.push(event);
    if (state.log.length > LOG) state.log.shift();
    state.turn = (state.turn + 1) % state.players.length;
    if (state.turn === state.first) state.round = state.round >= 20 ? 1 : state.round + 1;
    state.version += 1;
    client.send("ok", { version: state.version, turn: state.turn });
    if (this.patchRate === null) this.broadcastPatch();
  }
}

async function main() {
  const transport = new WebSocketTransport();
  const server = new Server({ transport, greet: false, gracefullyShutdown: false });
  server.define("castell", CastellRoom);
  await server.listen(PORT, HOST);
  const { port } = transport.server.address();
  process.stdout.write(`colyseus server listening on ws://${HOST}:${port}\n`);
  const stop = () => {
    server.gracefullyShutdown(false).catch(() => {}).finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
