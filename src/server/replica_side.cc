// The server as a replica (docs/replication.md, "The replica side"):
// REPLICAOF's switches between the roles, and what worker 0 does with what
// the link (replica_link.h) brings: a snapshot loaded in place of the
// keyspace, the stream's commands run in order holding every shard, their
// bytes passed on to this server's backlog (and replicas) unchanged.
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <strings.h>

#include "protocol/parser.h"
#include "server/command_replayer.h"
#include "server/log.h"
#include "server/server.h"
#include "server/worker.h"

namespace peregrine {

namespace {

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

}  // namespace

ReplicaLink::Settings Server::LinkSettings() const {
  ReplicaLink::Settings s;
  s.host = config_.replicaof_host;
  s.port = config_.replicaof_port;
  s.masteruser = config_.masteruser;
  s.masterauth = config_.masterauth;
  s.listening_port = config_.replica_announce_port != 0 ? config_.replica_announce_port : config_.port;
  s.announce_ip = config_.replica_announce_ip;
  s.timeout_s = config_.repl_timeout;
  s.tls = config_.tls_replication;
  s.tls_settings = config_.tls;
  s.diskless_load = config_.repl_diskless_load;
  return s;
}

bool Server::BecomeReplica(const std::string& host, int port, int connected_fd, bool failover) {
  if (link_ != nullptr && strcasecmp(link_->host().c_str(), host.c_str()) == 0 && link_->port() == port) return false;
  if (link_ != nullptr) {
    link_->Stop();
    link_.reset();
  }
  // What the shards logged goes to this server's replicas first; then they
  // are dropped (they will follow the new history).
  if (!replica_.load(std::memory_order_relaxed)) EmitShardChunks();
  config_.replicaof_host = host;
  config_.replicaof_port = port;
  replica_.store(true, std::memory_order_relaxed);
  SetLogRole('S');
  replication_->SetRelaying(true);
  for (size_t i = 0; i < num_shards(); i++) {
    // (A writable replica deletes them as a primary does: a write must not
    // find a key hidden and add it again.)
    shard(i).SetHideExpired(config_.replica_read_only);
    shard(i).SetLogRemovals(aof_->active());
  }
  master_in_.clear();
  fack_pending_.clear();
  // As Redis's replicationCacheMasterUsingMyself: this server's own
  // history, so that a former primary can continue from the replica that
  // took over (its second ID).
  ReplicaLink::Settings settings = LinkSettings();
  settings.connected_fd = connected_fd;
  settings.failover = failover;
  settings.bytes_in = &repl_stats_.net_input;
  link_ = std::make_unique<ReplicaLink>(std::move(settings), repl_ids_.replid, replication_->offset(),
                                        [this] { worker(0).waker().Notify(); });
  {
    std::lock_guard<std::mutex> lock(master_client_mu_);
    master_client_ = MasterClient();  // (made when its sync ends)
  }
  NoteDatasetEmpty();
  link_->Start();
  return true;
}

void Server::BecomePrimary() {
  if (link_ == nullptr) return;
  link_->Stop();
  link_.reset();
  master_in_.clear();
  config_.replicaof_host.clear();
  config_.replicaof_port = 0;
  // As Redis's shiftReplicationId: the primary's history stays reachable
  // (replicas of it continue here) up to the offset applied.
  const uint64_t offset = replication_->offset();
  repl_ids_.Shift(offset);
  replica_.store(false, std::memory_order_relaxed);
  SetLogRole('M');
  replication_->SetRelaying(false);
  if (!replication_->feeding()) replication_->ResetBacklog(config_.repl_backlog_size, offset);
  for (size_t i = 0; i < num_shards(); i++) {
    shard(i).SetHideExpired(false);
    shard(i).SetLogRemovals(true);
  }
  // (The caller logs Redis's "MASTER MODE enabled (... request from ...)".)
}

void Server::StopReplicaLink() {
  if (link_ != nullptr) link_->Stop();
}

bool Server::BeginFullSyncLoad(Worker& w, const ReplicaLink::Event& ev) {
  // As Redis's readSyncBulkPayload: with repl-diskless-load disabled the
  // file becomes the RDB file, and is loaded in place of every database;
  // otherwise the snapshot loads as it comes, through the link's pipe.
  AbortBgSave(/*aof_rewrite_too=*/true);
  const std::string& file = ev.data;
  const std::string& target = config_.dbfilename;
  if (ev.fd < 0 && ::rename(file.c_str(), target.c_str()) != 0) {
    LOG_WARNING("Failed trying to rename the temp DB into %s in MASTER <-> REPLICA synchronization: %s",
                target.c_str(), std::strerror(errno));
    ::unlink(file.c_str());
    return false;
  }
  auto load = std::make_unique<SyncLoad>();
  load->replid = ev.replid;
  load->offset = ev.offset;
  // swapdb (from the socket): the old data stays until the new is whole,
  // and stays if the load fails. Served meanwhile when the primary's
  // history is this server's (a PSYNC that could not continue): the old
  // data is an earlier point of the same data set (Redis's async loading);
  // else answered -LOADING.
  load->staged = ev.fd >= 0 && config_.repl_diskless_load == 2;
  load->async = load->staged && ev.replid == repl_ids_.replid;
  const int64_t now = UnixTimeMs();
  for (size_t s = 0; s < num_shards(); s++) {
    Shard& sh = shard(s);
    if (load->staged) {
      sh.BeginStaging();
      continue;
    }
    for (int d = 0; d < sh.num_dbs(); d++) {
      sh.watches().TouchAll(d, sh.db(d), nullptr, now);
      sh.db(d).Clear();
    }
    sh.aof().Clear();
    sh.BumpVersion();
  }
  if (!load->staged) {
    functions().Flush();
    FlushTracking(*this);  // (every tracking client: all its keys are stale)
  }
  LOG_NOTICE("MASTER <-> REPLICA sync: Loading DB in memory");
  // A new history: this server's own replicas start again too.
  replication_->SetRelaying(true);
  persistence_.loaded_repl_id.clear();
  persistence_.loaded_repl_db = 0;
  load->loader = std::make_unique<RdbLoader>(*this, w.lua(), /*merge=*/false);
  // (Keys past their deadline too: the primary's DELs remove them.)
  load->loader->set_keep_expired();
  if (load->staged) load->loader->set_staged();
  RdbLoader& loader = *load->loader;
  const bool async = load->async;
  sync_load_ = std::move(load);
  load_state_.store(async ? kAsyncLoad : kLoading, std::memory_order_release);
  bool found = true;
  std::string err;
  const bool opened = ev.fd >= 0 ? loader.OpenStream(ev.fd, ev.size, &err) : loader.Open(target, &found, &err);
  if (!opened || !found)
    EndFullSyncLoad(w, false, found ? err : "the synchronization file went", /*apply_rest=*/false);
  return true;  // (started, or ended; the caller's loop goes on with its events)
}

bool Server::SyncLoadReady() {
  RdbLoader& l = *sync_load_->loader;
  if (!l.streaming()) return true;
  l.FillAvailable();
  return l.input_ended() || l.buffered() >= kSliceBytes;
}

void Server::StepFullSyncLoad(Worker& w) {
  // (10 ms, then 1 ms for the others: Worker::ServeMasterLink.)
  const int64_t until = MonotonicUs() + 10000;
  RdbLoader& l = *sync_load_->loader;
  for (;;) {
    switch (l.Step(32)) {
      case StartupLoader::Status::kMore:
        if (MonotonicUs() < until && (!l.streaming() || l.input_ended() || l.buffered() >= kSliceLowBytes))
          continue;
        return;
      case StartupLoader::Status::kDone:
        EndFullSyncLoad(w, true, {});
        return;
      case StartupLoader::Status::kError:
        EndFullSyncLoad(w, false, sync_load_->loader->error());
        return;
    }
  }
}

void Server::EndStaging(Worker& w, bool ok, std::vector<std::shared_ptr<FunctionLibrary>>& libraries) {
  if (ok) LOG_NOTICE("MASTER <-> REPLICA sync: Swapping active DB with loaded DB");
  else LOG_NOTICE("MASTER <-> REPLICA sync: Discarding temporary DB");
  const int64_t now = UnixTimeMs();
  if (ok) AbortBgSave(/*aof_rewrite_too=*/true);
  for (size_t s = 0; s < num_shards(); s++) {
    Shard& sh = shard(s);
    if (!ok) {
      sh.DropStaged();
      continue;
    }
    // As SWAPDB: watchers of a key on either side see a change, and
    // clients blocked on a database may find their keys now. (A BGSAVE
    // of the old data stopped first, below: its snapshot would take the
    // new data's segments too.)
    for (int d = 0; d < sh.num_dbs(); d++) sh.watches().TouchAll(d, sh.db(d), &sh.staged(d), now);
    sh.SwapStaged();
    sh.aof().Clear();  // (a writable replica's writes to the old data)
    bool ready = false;
    for (int d = 0; d < sh.num_dbs() && !sh.blocking().empty(); d++) ready = sh.blocking().SignalAll(d) || ready;
    if (ready) w.NoteReady(static_cast<uint32_t>(s));
  }
  if (!ok) return;
  FlushTracking(*this);  // (the data swapped in: every tracked key may differ)
  functions().Flush();
  for (std::shared_ptr<FunctionLibrary>& lib : libraries) {
    std::string err;  // (checked as they came: only a name twice in the snapshot fails here)
    if (!functions().Add(lib, /*replace=*/true, &err))
      LOG_WARNING("Failed loading library from the MASTER synchronization, %s", err.c_str());
  }
}

void Server::EndFullSyncLoad(Worker& w, bool ok, const std::string& err, bool apply_rest) {
  std::unique_ptr<SyncLoad> load = std::move(sync_load_);
  load_state_.store(0, std::memory_order_release);
  std::vector<ReplicaLink::Event> rest = std::move(load->rest);
  if (load->staged) EndStaging(w, ok, load->loader->staged_libraries());
  if (!ok) {
    LOG_WARNING("%s", err.c_str());
    // The data is gone or half there: no history to continue (the next
    // PSYNC asks for a full sync), as Redis discards its cached primary.
    // (swapdb: the old data is whole, and so is its history.)
    if (!load->staged) {
      repl_ids_.Change();
      repl_ids_.ClearSecond();
      replication_->FreeBacklog();
    }
    // What was loaded goes too, as Redis empties its data after a failed
    // load (swapdb: the old data stays, EndStaging).
    for (size_t s = 0; s < num_shards() && !load->staged; s++) {
      for (int d = 0; d < shard(s).num_dbs(); d++) shard(s).db(d).Clear();
      shard(s).BumpVersion();
    }
    if (!load->staged) functions().Flush();
  } else {
    repl_ids_.replid = load->replid;
    repl_ids_.ClearSecond();
    replication_->ResetBacklog(config_.repl_backlog_size, load->offset);
    master_in_.clear();
    // (A new history: nothing of the old one counts as durable.)
    fack_pending_.clear();
    if (link_ != nullptr) link_->SetFsynced(-1);
    // The database the stream goes on in (a primary that is itself a
    // replica sends no SELECT until its primary's changes).
    const int db = persistence_.loaded_repl_db;
    master_db_ = db >= 0 && db < config_.databases ? db : 0;
    NewMasterClient();
    // The append-only file starts again from the new data (Redis restarts
    // it after a full sync).
    if (aof_->active()) {
      bool scheduled;
      std::string why;
      if (!StartAofRewrite(&why, &scheduled))
        LOG_WARNING("Can't rewrite the append only file after the sync: %s", why.c_str());
    }
  }
  load.reset();  // (the loader's pipe closes: a link still writing stops)
  if (link_ == nullptr) return;
  link_->LoadDone(ok);
  if (apply_rest) ApplyMasterEvents(w, std::move(rest));
}

void Server::ApplyMasterEvents(Worker& w, std::vector<ReplicaLink::Event> events) {
  for (size_t i = 0; i < events.size(); i++) {
    ReplicaLink::Event& ev = events[i];
    if (sync_load_ != nullptr) {
      // (A load started: what follows it waits for its end.)
      sync_load_->rest.assign(std::make_move_iterator(events.begin() + static_cast<ptrdiff_t>(i)),
                              std::make_move_iterator(events.end()));
      return;
    }
    switch (ev.kind) {
      case ReplicaLink::Event::Kind::kFullSync:
        FailoverAnswered(true);
        if (!BeginFullSyncLoad(w, ev)) link_->LoadDone(false);
        break;
      case ReplicaLink::Event::Kind::kAccepted:
        FailoverAnswered(true);  // (the target took over; its snapshot comes next)
        break;
      case ReplicaLink::Event::Kind::kRefused:
        // A failover's target said no: a primary again (the link goes).
        FailoverAnswered(false);
        if (link_ == nullptr) return;
        break;
      case ReplicaLink::Event::Kind::kContinue:
        FailoverAnswered(true);
        // +CONTINUE <id>: the primary's ID changed (it was promoted): ours
        // follows, the old one reachable up to here (Redis's same steps).
        if (ev.replid.size() == 40 && ev.replid != repl_ids_.replid) {
          replication_->SetRelaying(true);  // (this server's replicas must hear of it)
          fack_pending_.clear();
          link_->SetFsynced(-1);
          repl_ids_.replid2 = repl_ids_.replid;
          repl_ids_.second_offset = static_cast<int64_t>(replication_->offset()) + 1;
          repl_ids_.replid = ev.replid;
          LOG_NOTICE("Master replication ID changed to %s", ev.replid.c_str());
        }
        if (!replication_->feeding()) replication_->ResetBacklog(config_.repl_backlog_size, replication_->offset());
        master_in_.clear();
        NewMasterClient(/*if_none=*/true);  // (Redis resurrects its cached master client, or makes one)
        break;
      case ReplicaLink::Event::Kind::kBytes:
        // (Mostly nothing is left over from before: the bytes move in.)
        if (master_in_.empty())
          master_in_ = std::move(ev.data);
        else
          master_in_ += ev.data;
        break;
      case ReplicaLink::Event::Kind::kDown:
        // What came whole runs; a command cut short goes (the next link
        // asks for it again: the offset counts what ran).
        ApplyMasterStream(w);
        master_in_.clear();
        break;
    }
  }
  if (sync_load_ != nullptr) return;  // (the load's end comes back here)
  ApplyMasterStream(w);
  NoteDatasetEmpty();
  link_->Applied(repl_ids_.replid, replication_->offset());
}

void Server::NoteDatasetEmpty() {
  // (Every shard held. Only on-empty-db asks: otherwise "not empty", the
  // safe side should CONFIG SET turn it on before the stream's next batch.)
  if (config_.repl_diskless_load != 1) {
    link_->SetDatasetEmpty(false);
    return;
  }
  bool empty = true;
  for (size_t s = 0; s < num_shards() && empty; s++)
    for (int d = 0; d < shard(s).num_dbs() && empty; d++) empty = shard(s).db(d).size() == 0;
  link_->SetDatasetEmpty(empty);
}

void Server::PrefetchMasterKeys(const std::vector<std::string_view>& flat,
                                const std::vector<std::pair<size_t, size_t>>& cmds, size_t from, size_t to,
                                const CommandSpec** specs) {
  // As a client's pipeline (Worker::ProcessInput): every first key's home
  // group, then its arena line, then its entry, so that the cache misses of
  // the window overlap instead of coming one command at a time. (In the
  // database the stream is in now: a SELECT inside the window only makes
  // some of it useless.)
  std::pair<Db*, uint64_t> keys[kPrefetchWindow];
  size_t n = 0;
  const int db = master_replayer_->db();
  for (size_t i = from; i < to; i++) {
    specs[i - from] = nullptr;
    if (cmds[i].second == 0) continue;
    const std::string_view* args = flat.data() + cmds[i].first;
    const CommandSpec* spec = specs[i - from] = commands_.FindAny(args[0]);
    if (cmds[i].second < 2) continue;
    if (spec == nullptr || spec->first_key <= 0 || static_cast<size_t>(spec->first_key) >= cmds[i].second) continue;
    const std::string_view key = args[spec->first_key];
    keys[n++] = {&shard(ShardIndexOf(key)).db(db), CompactKey::Hash(key)};
  }
  for (size_t i = 0; i < n; i++) keys[i].first->PrefetchGroup(keys[i].second);
  for (size_t i = 0; i < n; i++) keys[i].first->PrefetchArena(keys[i].second);
  for (size_t i = 0; i < n; i++) keys[i].first->PrefetchEntry(keys[i].second);
}

void Server::ApplyMasterStream(Worker& w) {
  if (master_in_.empty()) return;
  if (master_replayer_ == nullptr)
    master_replayer_ =
        std::make_unique<CommandReplayer>(*this, w, CommandReplayer::Options{.logged = true, .publishes = true, .absolute_deadlines = true});
  // Whole commands only, and a transaction only once its EXEC is here (no
  // reader may see half of it; every shard is held while they run).
  // (No limit on a bulk's length from the primary, as Redis.)
  RequestParser parser(RequestParser::Limits{.max_bulk_len = UINT64_MAX});
  std::vector<std::string_view> flat;             // every command's arguments (views into master_in_)
  std::vector<std::pair<size_t, size_t>> cmds;    // (first in flat, count)
  size_t pos = 0, end = 0, whole = 0;
  bool in_multi = false;
  for (;;) {
    const RequestParser::Result r = parser.Parse(master_in_.data() + pos, master_in_.size() - pos);
    if (r == RequestParser::Result::kNeedMore) break;
    if (r == RequestParser::Result::kError) {
      LOG_WARNING("Protocol error from the MASTER (%s): the link is dropped", parser.error().c_str());
      link_->Drop();
      break;
    }
    pos += parser.consumed();
    const auto a = parser.args();
    const size_t n = parser.inline_command() ? 0 : a.size();  // (a newline: nothing to run)
    cmds.emplace_back(flat.size(), n);
    flat.insert(flat.end(), a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n));
    if (n > 0 && EqualsNoCase(a[0], "multi")) in_multi = true;
    if (n > 0 && (EqualsNoCase(a[0], "exec") || EqualsNoCase(a[0], "discard"))) in_multi = false;
    if (!in_multi) {
      whole = cmds.size();
      end = pos;
    }
  }
  if (whole == 0) return;
  master_replayer_->set_db(master_db_);
  const CommandSpec* specs[kPrefetchWindow];
  bool getack = false;
  std::string_view last;  // (the master client's cmd= in CLIENT LIST)
  for (size_t i = 0; i < whole; i++) {
    if (i % kPrefetchWindow == 0) PrefetchMasterKeys(flat, cmds, i, std::min(whole, i + kPrefetchWindow), specs);
    const std::span<const std::string_view> args(flat.data() + cmds[i].first, cmds[i].second);
    if (args.empty()) continue;
    last = args[0];
    if (EqualsNoCase(args[0], "replconf")) {
      if (args.size() >= 2 && EqualsNoCase(args[1], "getack")) getack = true;
      continue;
    }
    // (Every shard is held: the transaction is whole for readers anyway;
    // the replica's own append-only file gets it as one.)
    if (EqualsNoCase(args[0], "multi")) {
      master_replayer_->BeginTransaction();
      continue;
    }
    if (EqualsNoCase(args[0], "exec") || EqualsNoCase(args[0], "discard")) {
      master_replayer_->EndTransaction();
      continue;
    }
    if (!master_replayer_->Run(args, specs[i % kPrefetchWindow]))
      LOG_WARNING("Unknown command '%.*s' from the MASTER: skipped", static_cast<int>(args[0].size()), args[0].data());
  }
  master_db_ = master_replayer_->db();
  if (!last.empty()) {
    std::string name(last);
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::lock_guard<std::mutex> lock(master_client_mu_);
    master_client_.cmd = std::move(name);
    master_client_.db = master_db_;
    master_client_.buffer = master_in_.capacity();
  }
  for (size_t s = 0; s < num_shards(); s++) shard(s).BumpVersion();
  // Clients of the replica blocked on keys the stream filled (BLPOP on a
  // replica, as Redis serves them).
  if (w.waits().has_ready()) w.waits().ServeReadyKeys(UnixTimeMs());
  // The replica's own append-only file, then its replicas: the same bytes.
  EmitShardChunks();
  replication_->FeedRaw(std::string_view(master_in_).substr(0, end));
  if (aof_->active()) {
    // (appendfsync no makes nothing durable by itself: the oldest go, and
    // FACK only lags.)
    if (fack_pending_.size() >= 4096) fack_pending_.pop_front();
    fack_pending_.emplace_back(aof_->written(), replication_->offset());
  }
  master_in_.erase(0, end);
  if (getack) {
    link_->Applied(repl_ids_.replid, replication_->offset());
    link_->RequestAck();
  }
}

}  // namespace peregrine

namespace peregrine {

void Server::ReplicaCron() {
  // REPLCONF ACK's FACK: the offset whose commands the file holds durably.
  if (link_ == nullptr) return;
  if (!aof_->active()) {
    fack_pending_.clear();
    link_->SetFsynced(-1);
    return;
  }
  // (While the file has no base for the data yet, after a full sync,
  // nothing in it can rebuild the data: no FACK moves.)
  if (aof_->waiting_for_base() || (bgsave_ != nullptr && bgsave_->aof_base())) return;
  const uint64_t synced = aof_->synced();
  int64_t fsynced = -1;
  while (!fack_pending_.empty() && fack_pending_.front().first <= synced) {
    fsynced = static_cast<int64_t>(fack_pending_.front().second);
    fack_pending_.pop_front();
  }
  if (fsynced >= 0) link_->SetFsynced(fsynced);
}

bool Server::ReplicaHistory(std::string* id, uint64_t* offset, int* db) {
  if (!replica_.load(std::memory_order_relaxed) || !replication_->feeding()) return false;
  *id = repl_ids_.replid;
  *offset = replication_->offset();
  *db = master_db_;
  return true;
}

void Server::StartReplicaOfConfig() {
  if (config_.replicaof_host.empty()) return;
  const PersistenceState& p = persistence_;
  // (Not from an append-only file: its base's offset is older than the
  // commands after it, as Redis ignores it there.)
  if (!p.loaded_repl_id.empty() && !config_.appendonly) {
    // Redis 7's restart of a replica: the file's history, continued.
    repl_ids_.replid = p.loaded_repl_id;
    repl_ids_.ClearSecond();
    replication_->ResetBacklog(config_.repl_backlog_size, p.loaded_repl_offset);
    master_db_ = p.loaded_repl_db >= 0 && p.loaded_repl_db < config_.databases ? p.loaded_repl_db : 0;
    LOG_NOTICE("Before turning into a replica, using my own master parameters to synthesize a cached master: I may "
               "be able to synchronize with the new master with just a partial transfer.");
  }
  const std::string host = config_.replicaof_host;
  BecomeReplica(host, config_.replicaof_port);
}

}  // namespace peregrine
