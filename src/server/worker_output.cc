// A worker's side of its clients' end and of what they receive unasked:
// closing and freeing clients, counting error replies, Pub/Sub delivery
// (the bytes themselves go out through ClientIo, client_io.h).
#include "server/worker.h"

#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/lent_blocks.h"
#include "core/memory.h"
#include "net/socket.h"
#include "server/log.h"

#include "server/worker_internal.h"

namespace peregrine {

using namespace worker_internal;

void Worker::CloseClient(Client& c) {
  if (&c == current_client_ || &c == busy_client_) {
    c.close_after_reply = true;
    io_.QueueWrite(c);
  } else {
    FreeClient(c);
  }
}

void Worker::OnErrorReply(std::string_view msg) {
  stats_.total_error_replies++;
  size_t sp = msg.find(' ');
  std::string code(msg.substr(0, std::min<size_t>(sp, 64)));
  // A bounded number of distinct codes, as Redis bounds errorstats.
  if (stats_.error_counts.size() < 128 || stats_.error_counts.count(code)) stats_.error_counts[code]++;
}







void Worker::ServeReplicas() {
  ReplicationPrimary& repl = server_.replication();
  const bool waiters = repl.has_waiters(index_);
  if (!repl.told(index_) && !waiters) [[likely]]
    return;
  // The replicas' bytes first: taking them clears this worker's flag, so
  // an ACK that comes after the waiters are looked at below wakes it again.
  const int64_t due_us = repl.ServeWorker(
      index_,
      [this](uint64_t id, std::string& bytes) {
        auto it = clients_.find(id);
        if (it == clients_.end() || it->second->closed) return;
        Client& c = *it->second;
        if (c.pumping()) [[unlikely]] {
          // (Over TLS: the end of its snapshot is still to be read from
          // the pump; the stream follows it, ClientIo::EndPump.)
          c.repl_pump->after.append(bytes);
          const uint64_t hard = server_.config().output_buffer_limits[Config::kReplicaClients].hard;
          if (hard != 0 && c.repl_pump->after.size() >= hard) io_.CloseOverLimit(c);
          return;
        }
        c.repl_hold = false;  // (online now: its snapshot went out)
        c.out.Append(bytes);
        // A replica that falls behind by client-output-buffer-limit
        // replica is dropped (it will ask to continue, or sync again).
        if (!io_.OverOutputLimit(c)) io_.QueueWrite(c);
      },
      [this](uint64_t id, ReplicationPrimary::CloseHow how) {
        auto it = clients_.find(id);
        if (it == clients_.end()) return;
        Client& c = *it->second;
        if (how == ReplicationPrimary::kCloseOverLimit) {
          io_.CloseOverLimit(c);
          return;
        }
        // rdb-only over TLS: closed once what the pump passed on is out
        // (the pump may read the snapshot's end before or after this).
        if (how == ReplicationPrimary::kCloseNow || c.repl_pump == nullptr) {
          CloseClient(c);
        } else if (c.pumping()) {
          c.repl_pump->close_at_end = true;
        } else {
          c.close_after_reply = true;
          io_.QueueWrite(c);
        }
      });
  if (due_us >= 0) loop_.WakeWithin(static_cast<int>((due_us + 999) / 1000));
  if (!waiters) return;
  // Clients in WAIT that have their answer: it, then their input.
  repl.FlushGetack();
  // (What the file holds counts as durable only while it can rebuild the
  // data: on, its writes not failing, its base there.)
  const AppendOnlyFile& aof = server_.aof();
  const bool durable = aof.active() && !aof.write_failed() && !aof.waiting_for_base();
  const int64_t next = repl.ServeWaiters(index_, UnixTimeMs(), durable ? aof.synced() : 0, aof.active(),
                                         [this](uint64_t id, int local, int count, int error) {
    auto it = clients_.find(id);
    Client* client = it == clients_.end() || it->second->closed ? nullptr : it->second.get();
    if (error == ReplicationPrimary::kWaitShutdownGo || error == ReplicationPrimary::kWaitShutdownAborted) {
      // SHUTDOWN's wait for replicas is over (its client may be gone).
      if (error == ReplicationPrimary::kWaitShutdownGo && ShutdownAfterWait()) {
        if (client != nullptr) client->close_after_reply = true;
      } else if (client != nullptr) {
        ReplyWriter(&client->out, client->resp, this).Error("ERR Errors trying to SHUTDOWN. Check logs.");
        resume_.push_back(client->id);
      }
      if (client == nullptr) return;
      client->wait_acks = false;
      io_.QueueWrite(*client);
      loop_.WakeWithin(0);
      return;
    }
    if (client == nullptr) return;
    Client& c = *client;
    c.wait_acks = false;
    ReplyWriter reply(&c.out, c.resp, this);
    if (error == ReplicationPrimary::kWaitUnblocked) {
      reply.Error("UNBLOCKED client unblocked via CLIENT UNBLOCK");
    } else if (error == ReplicationPrimary::kWaitAofOff) {
      reply.Error("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.");
    } else if (local >= 0) {  // WAITAOF
      reply.ArrayHeader(2);
      reply.Integer(local);
      reply.Integer(count);
    } else {
      reply.Integer(count);
    }
    io_.QueueWrite(c);
    resume_.push_back(c.id);
    loop_.WakeWithin(0);
  });
  if (next >= 0) loop_.WakeWithin(static_cast<int>(std::min<int64_t>(next, 1000)));
}

size_t Worker::Publish(std::string_view channel, std::string_view message, bool own_thread, bool shard) {
  if (pubsub_.subscriptions() == 0) return 0;
  // A message may tell of writes here that the replication stream does not
  // have yet: its subscribers' replies wait for them (BatchRelay).
  const uint64_t hold = relay_.StreamHoldNow();
  auto deliver = [&](Client& c, std::string_view pattern) {
    if (c.closed) return;  // closed by an earlier delivery of this message
    c.HoldForStream(hold);
    auto write = [&](ReplyWriter w) {
      if (pattern.empty()) {
        w.PushHeader(3);
        w.Bulk(shard ? "smessage" : "message");
      } else {
        w.PushHeader(4);
        w.Bulk("pmessage");
        w.Bulk(pattern);
      }
      w.Bulk(channel);
      w.Bulk(message);
    };
    if (c.batch_in_flight) [[unlikely]] {
      // (After that batch's replies: Client::pushes_after.)
      if (c.pushes_after == nullptr) c.pushes_after = std::make_unique<Buffer>();
      write(ReplyWriter(c.pushes_after.get(), c.resp));
      return;
    }
    write(ReplyWriter(&c.out, c.resp));
    if (!io_.OverOutputLimit(c, own_thread)) io_.QueueWrite(c);
  };
  if (shard) return pubsub_.ForEachShardReceiver(channel, [&](Client& c) { deliver(c, {}); });
  return pubsub_.ForEachReceiver(channel, deliver);
}

void Worker::DeliverEvents() {
  if (!invalidations_.empty()) DeliverInvalidations();
  if (events_.empty()) return;
  std::vector<KeyspaceEvent> events = events_.Take();
  // Other workers' subscribers: one message each, after what the stream
  // must have first (as for this worker's subscribers, Publish), in the
  // order this thread made them (BatchRelay::SendAfter keeps it).
  const uint64_t hold = relay_.StreamHoldNow();
  for (uint32_t w = 0; w < nworkers_; w++)
    if (w != index_ && server_.worker(w).pubsub().subscriptions() > 0)
      relay_.SendAfter(hold, w, new EventsMail(events));
  DeliverEvents(events);
}

void Worker::DeliverEvents(const std::vector<KeyspaceEvent>& events) {
  if (pubsub_.subscriptions() == 0) return;
  for (const KeyspaceEvent& e : events) {
    if (e.flags & notify::kKeyspace) Publish(KeyspaceEvents::Channel(e, true), e.event, true, false);
    if (e.flags & notify::kKeyevent) Publish(KeyspaceEvents::Channel(e, false), e.key, true, false);
  }
}

void Worker::DropShardChannels(const std::function<bool(std::string_view, uint64_t)>& gone, bool own_thread) {
  if (pubsub_.shard_channel_count() == 0) return;
  for (auto& [channel, subscribers] : pubsub_.ShardChannelsWhere([&](std::string_view ch) { return gone(ch, 0); })) {
    for (Client* c : subscribers) {
      if (c->closed || c->subs == nullptr) continue;
      auto mine = c->subs->shard_channels.find(channel);
      if (mine == c->subs->shard_channels.end() || !gone(channel, mine->second)) continue;
      pubsub_.SUnsubscribe(*c, channel);
      ReplyWriter w(&c->out, c->resp);
      w.PushHeader(3);
      w.Bulk("sunsubscribe");
      w.Bulk(channel);
      w.Integer(c->subs != nullptr ? static_cast<int64_t>(c->subs->shard_channels.size()) : 0);
      if (!io_.OverOutputLimit(*c, own_thread)) io_.QueueWrite(*c);
    }
  }
}

void Worker::FreeClient(Client& c) {
  if (c.closed) return;
  c.closed = true;
  if (c.replica) server_.replication().Detach(c.id);
  io_.StopPump(c);
  if (c.wait_acks) server_.replication().DropWaiter(c.id, index_);
  if (c.blocked != nullptr) {
    waits_.CancelBlocked(c.blocked);  // if it was served meanwhile, its outcome goes with it
    waits_.Unblocked(c, *c.blocked);
    c.blocked.reset();
  }
  c.rerun.reset();
  monitor_.Stop(c);
  DisableTracking(server_.tracking(), c);
  Unwatch(c);
  if (c.import_slots != nullptr) [[unlikely]]
    if (ClusterService* cluster = server_.cluster(); cluster != nullptr) cluster->ImportClientGone(c.import_name, c.id);
  pubsub_.RemoveClient(c);
  loop_.Remove(c.fd);
  close(c.fd);
  io_.Forget(c);
  if (c.open_batch != nullptr) {
    relay_.Recycle(c.open_batch);
    c.open_batch = nullptr;
  }
  if (c.pending != nullptr) {
    relay_.Recycle(c.pending);
    c.pending = nullptr;
  }
  auto it = clients_.find(c.id);
  if (it != clients_.end()) {
    to_free_.push_back(std::move(it->second));
    clients_.erase(it);
    connections_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  if (std::unique_ptr<Client> kept = script_busy_.ReleaseAdopted(c)) {
    to_free_.push_back(std::move(kept));
    connections_.fetch_sub(1, std::memory_order_relaxed);
  }
}

}  // namespace peregrine
