// CLIENT TRACKING's side of a worker (tracking.h, docs/tracking.md): the
// reads it remembers, and the invalidations it hands to its clients or
// sends to their workers.
#include <cstdlib>

#include "server/server.h"
#include "server/worker.h"

namespace peregrine {

void Worker::RememberReads(uint64_t id, uint32_t home, const CommandSpec* cmd,
                           std::span<const std::string_view> args) {
  // EVAL_RO and FCALL_RO read nothing themselves (their scripts' calls are
  // remembered), and a Pub/Sub command's "keys" are channels (Redis).
  if (cmd->flags & (kCmdScript | kCmdPubsub)) return;
  std::vector<size_t> positions;
  if (!cmd->KeyPositions(args, &positions)) {
    // Redis finds these keys reading numkeys as atoi does (its getkeys
    // procs): "1 " counts as 1 (the command itself refused it).
    const size_t at = static_cast<size_t>(cmd->numkeys_index);
    if (at == 0 || at >= args.size()) return;
    std::vector<std::string_view> lenient(args.begin(), args.end());
    const std::string n = std::to_string(std::atoll(std::string(args[at]).c_str()));
    lenient[at] = n;
    if (!cmd->KeyPositions(lenient, &positions)) return;
  }
  for (size_t pos : positions) {
    const std::string_view key = args[pos];
    // (Every key's shard is held: the command's own, or those it holds.)
    Shard& s = nworkers_ == 1 ? shard_ : server_.shard(server_.ShardIndexOf(key));
    s.tracking().Remember(key, id, home);
    s.SetTrackRemovals(true);
    s.tracking().Limit(100);
  }
}

namespace {

// The checks of an invalidation of keys that need its client's own state
// (`flags`, `id`): a key remembered before the client switched to BCAST, or
// a prefix's keys for one that left it, are dropped (Redis); NOLOOP leaves
// out the client's own changes. False if nothing is left to tell.
bool KeepFor(uint8_t flags, uint64_t id, Invalidation& inv) {
  if (inv.bcast != ((flags & tracking::kBcast) != 0)) return false;
  if (flags & tracking::kNoloop) {
    std::erase_if(inv.keys, [&](const auto& k) { return k.second == id; });
    if (inv.keys.empty()) return false;
  }
  return true;
}

// An invalidation for a tracking client that redirects, readdressed here,
// where it was made, to the client it redirects to (TrackingRegistry::
// Redirect), with what its own worker would have checked: false when it
// has nothing to say.
bool RedirectAtSource(TrackingInvalidations& pending, Invalidation& inv) {
  TrackingRegistry::Redirect r;
  if (inv.behalf != 0 || inv.kind == Invalidation::Kind::kBroken || !pending.RedirectOf(inv.client, &r))
    return true;
  if (inv.kind == Invalidation::Kind::kKeys) {
    if (inv.bcast != r.bcast) return false;
    if (r.noloop) {
      std::erase_if(inv.keys, [&](const auto& k) { return k.second == inv.client; });
      if (inv.keys.empty()) return false;
    }
  }
  inv.behalf = inv.client;
  inv.behalf_home = inv.home;
  inv.null_resp = r.resp;
  inv.client = r.to;
  inv.home = r.to_home;
  return true;
}

}  // namespace

void Worker::DeliverInvalidations() {
  std::vector<Invalidation> all = invalidations_.Take();
  std::vector<std::vector<Invalidation>> out;  // other workers' clients'
  const bool redirects = server_.tracking().any_redirect();
  for (Invalidation& inv : all) {
    if (redirects && !RedirectAtSource(invalidations_, inv)) continue;
    if (inv.home == index_) {
      DeliverInvalidation(inv);
      continue;
    }
    if (out.empty()) out.resize(nworkers_);
    out[inv.home].push_back(std::move(inv));
  }
  if (out.empty()) return;
  // Behind the replies of the commands that ran here (the same ring, and
  // after what the replication stream must have first: SendAfter).
  const uint64_t hold = relay_.StreamHoldNow();
  for (uint32_t w = 0; w < nworkers_; w++)
    if (!out[w].empty()) relay_.SendAfter(hold, w, new InvalidateMail(std::move(out[w])));
  // In their rings before this worker's clients' replies leave (the loop's
  // before-sleep hook flushes the outboxes first): a client told its write
  // is done finds the invalidation there before the answer to whatever it
  // asks next of the tracking client's worker (Worker::OnClientEvent serves
  // the mail before a tracking client's input). (Not here: a write group's
  // part may be running, whose log must not leave half made.)
  invalidations_.mailed = true;
}

void Worker::DeliverInvalidation(Invalidation& inv) {
  auto it = clients_.find(inv.client);
  Client* c = it == clients_.end() || it->second->closed ? nullptr : it->second.get();
  // The client it tells no longer exists: one redirecting here is told
  // that its redirection is broken (Redis's sendTrackingMessage).
  auto broken = [&](uint64_t tracker, uint32_t tracker_home, uint64_t gone) {
    Invalidation b;
    b.kind = Invalidation::Kind::kBroken;
    b.client = tracker;
    b.home = tracker_home;
    b.gone = gone;
    if (tracker_home == index_) {
      DeliverInvalidation(b);
    } else {
      std::vector<Invalidation> one;
      one.push_back(std::move(b));
      relay_.SendAfter(relay_.StreamHoldNow(), tracker_home, new InvalidateMail(std::move(one)));
    }
  };
  if (inv.behalf != 0) {  // for the client redirecting here
    if (c == nullptr) {
      broken(inv.behalf, inv.behalf_home, inv.client);
      return;
    }
    WriteInvalidation(*c, inv, /*redirected=*/true, inv.null_resp);
    return;
  }
  if (c == nullptr || !(c->tracking & tracking::kOn)) return;
  if (inv.kind == Invalidation::Kind::kBroken) {
    c->tracking |= tracking::kBrokenRedir;
    if (c->resp < 3) return;
    Invalidation note = inv;  // (written as a push of its own)
    WriteInvalidation(*c, note, /*redirected=*/false, c->resp);
    return;
  }
  if (inv.kind == Invalidation::Kind::kKeys && !KeepFor(c->tracking, c->id, inv)) return;
  if (c->tracking_redirect == 0) {
    WriteInvalidation(*c, inv, /*redirected=*/false, c->resp);
    return;
  }
  inv.behalf = c->id;
  inv.behalf_home = index_;
  inv.null_resp = static_cast<uint8_t>(c->resp);
  inv.client = c->tracking_redirect;
  inv.home = c->tracking_redirect_home;
  if (inv.home == index_) {
    DeliverInvalidation(inv);
    return;
  }
  const uint32_t to = inv.home;
  std::vector<Invalidation> one;
  one.push_back(std::move(inv));
  relay_.SendAfter(relay_.StreamHoldNow(), to, new InvalidateMail(std::move(one)));
}

namespace {

// One invalidation as `w` writes it for a client speaking `resp` (the null
// of a flush in `null_resp`, the tracking client's protocol).
void WritePush(ReplyWriter& w, const Invalidation& inv, int resp, int null_resp) {
  if (inv.kind == Invalidation::Kind::kBroken) {
    w.PushHeader(2);
    w.Bulk("tracking-redir-broken");
    w.Integer(static_cast<int64_t>(inv.gone));
    return;
  }
  if (resp >= 3) {
    w.PushHeader(2);
    w.Bulk("invalidate");
  } else {
    w.PushHeader(3);
    w.Bulk("message");
    w.Bulk("__redis__:invalidate");
  }
  if (inv.kind == Invalidation::Kind::kFlush) {
    // (The null of the tracking client's protocol, as Redis writes it.)
    w.Raw(null_resp >= 3 ? std::string_view("_\r\n") : std::string_view("$-1\r\n"));
    return;
  }
  w.ArrayHeader(inv.keys.size());
  for (const auto& [key, changer] : inv.keys) w.Bulk(key);
}

}  // namespace

void Worker::WriteInvalidation(Client& to, const Invalidation& inv, bool redirected, int null_resp) {
  // Over RESP2 only a client redirected to in Pub/Sub mode can be told (a
  // message on __redis__:invalidate); any other gets nothing (Redis).
  if (to.resp < 3 && inv.kind != Invalidation::Kind::kBroken &&
      !(redirected && to.subs != nullptr && to.subs->total() > 0))
    return;
  if (to.batch_in_flight) {  // (after that batch's replies: Client::pushes_after)
    if (to.pushes_after == nullptr) to.pushes_after = std::make_unique<Buffer>();
    ReplyWriter w(to.pushes_after.get(), to.resp);
    WritePush(w, inv, to.resp, null_resp);
    return;
  }
  ReplyWriter w(&to.out, to.resp);
  WritePush(w, inv, to.resp, null_resp);
  if (!io_.OverOutputLimit(to, true)) io_.QueueWrite(to);
}

void Worker::WriteOwnInvalidations(Client& c, ReplyWriter& reply) {
  // What its worker would check (DeliverInvalidation), with the flags the
  // client had when it sent the command (ExecBatch::Command::tracking).
  // Redirected ones, and any client's over RESP2, go the usual way.
  if (!(c.tracking & tracking::kOn) || c.resp < 3) return;
  TrackingRegistry::Redirect r;
  if (server_.tracking().any_redirect() && invalidations_.RedirectOf(c.id, &r)) return;
  for (Invalidation& inv : invalidations_.TakeFor(c.id, c.home))
    if (KeepFor(c.tracking, c.id, inv)) WritePush(reply, inv, c.resp, c.resp);
}

}  // namespace peregrine
