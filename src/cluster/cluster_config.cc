// nodes.conf (cluster_bus.h): the cluster as this node last knew it, one
// line per node in CLUSTER NODES's format with Redis 7.2's aux fields,
// then "vars currentEpoch N lastVoteEpoch M". Written whole to a
// temporary file and renamed over the old one, so a crash leaves one or
// the other; locked while the node runs, so that two nodes never share it.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cluster/cluster_bus.h"
#include "core/numbers.h"
#include "server/log.h"

namespace peregrine::cluster {

namespace {

std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

bool ParsePort(std::string_view s, int* out) {
  int64_t v;
  if (!ParseInt64(s, &v) || v < 0 || v > 65535) return false;
  *out = static_cast<int>(v);
  return true;
}

bool ParseSlot(std::string_view s, int* out) {
  int64_t v;
  if (!ParseInt64(s, &v) || v < 0 || v >= static_cast<int64_t>(kNumSlots)) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

bool ClusterBus::Load(std::string* err) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string& path = settings_.config_file;
  // The lock: held for as long as the process runs (the fd stays open).
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    *err = "Can't open " + path + " in order to acquire a lock: " + strerror(errno);
    return false;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    if (errno == EWOULDBLOCK) {
      *err = "Sorry, the cluster configuration file " + path +
             " is already used by a different Redis Cluster node. Please make sure that different nodes use "
             "different cluster configuration files.";
    } else {
      *err = "Impossible to lock " + path + ": " + strerror(errno);
    }
    return false;
  }
  lock_fd_ = fd;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  bool save = false;
  if (text.str().find_first_not_of(" \t\r\n") == std::string::npos) {
    myself_ = CreateNode("", kNodeMyself | kNodeMaster);
    LOG_NOTICE("No cluster configuration found, I'm %.40s", myself_->name.c_str());
    save = true;
  } else if (!LoadConfigFile(text.str(), err)) {
    return false;
  } else {
    LOG_NOTICE("Node configuration loaded, I'm %.40s", myself_->name.c_str());
  }
  myself_->port = settings_.announce_port != 0 ? settings_.announce_port : port_;
  myself_->tls_port = settings_.announce_tls_port != 0 ? settings_.announce_tls_port : tls_port_;
  myself_->cport = settings_.announce_bus_port != 0 ? settings_.announce_bus_port : bus_port_;
  myself_->hostname = settings_.announce_hostname;
  myself_->human_nodename = settings_.announce_human_nodename;
  if (!settings_.announce_ip.empty()) myself_->ip = settings_.announce_ip;
  if (save && !SaveConfigFile(true, err)) return false;
  // A replica (as nodes.conf says) follows its primary again once the
  // server runs (worker 0's cron).
  if (myself_->is_replica() && myself_->primary != nullptr && !myself_->primary->ip.empty()) {
    server_tasks_.follow = true;
    server_tasks_.follow_host = myself_->primary->ip;
    server_tasks_.follow_port = myself_->primary->port;
    server_tasks_pending_.store(true, std::memory_order_release);
  }
  PublishRoutes();
  return true;
}

bool ClusterBus::LoadConfigFile(const std::string& text, std::string* err) {
  auto corrupt = [&](const std::string& why) {
    *err = "Unrecoverable error: corrupted cluster config file \"" + settings_.config_file + "\" (" + why + ").";
    return false;
  };
  std::istringstream lines(text);
  std::string line;
  struct Pending {
    Node* node;
    std::string primary;
  };
  std::vector<Pending> pending;
  std::vector<std::pair<int, std::string>> migrating, importing;
  while (std::getline(lines, line)) {
    std::vector<std::string> w = Words(line);
    if (w.empty()) continue;
    if (w[0] == "vars") {
      for (size_t i = 1; i + 1 < w.size(); i += 2) {
        // Epochs are unsigned 64-bit, as Redis reads them (a peer may
        // announce one past INT64_MAX, and it is saved as such).
        uint64_t v;
        if (!ParseUint64(w[i + 1], &v)) return corrupt("bad vars");
        if (w[i] == "currentEpoch")
          current_epoch_ = v;
        else if (w[i] == "lastVoteEpoch")
          last_vote_epoch_ = v;
        else
          LOG_WARNING("Skipping unknown cluster config variable '%s'", w[i].c_str());
      }
      continue;
    }
    if (w.size() < 8) return corrupt("a line of fewer than 8 fields");
    if (!ValidNodeName(w[0])) return corrupt("a bad node id");
    Node* n = Lookup(w[0]);
    if (n == nullptr) n = CreateNode(w[0], 0);
    // ip:port@cport[,hostname[,key=value...]]
    std::string addr = w[1];
    std::vector<std::string> parts;
    for (size_t start = 0;;) {
      const size_t comma = addr.find(',', start);
      parts.push_back(addr.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    const std::string& hostport = parts[0];
    const size_t colon = hostport.rfind(':');
    const size_t at = hostport.find('@', colon == std::string::npos ? 0 : colon);
    if (colon == std::string::npos) return corrupt("an address without a port");
    n->ip = hostport.substr(0, colon);
    if (!ParsePort(std::string_view(hostport).substr(colon + 1, at == std::string::npos ? std::string::npos
                                                                                          : at - colon - 1),
                   &n->port))
      return corrupt("a bad port");
    if (at != std::string::npos && !ParsePort(std::string_view(hostport).substr(at + 1), &n->cport))
      return corrupt("a bad bus port");
    if (at == std::string::npos) n->cport = n->port + 10000;
    for (size_t i = 1; i < parts.size(); i++) {
      const size_t eq = parts[i].find('=');
      if (eq == std::string::npos) {
        if (i == 1) n->hostname = parts[i];
        continue;
      }
      const std::string key = parts[i].substr(0, eq), value = parts[i].substr(eq + 1);
      if (key == "shard-id") {
        if (!ValidNodeName(value)) return corrupt("a bad shard id");
        n->shard_id = value;
      } else if (key == "nodename") {
        n->human_nodename = value;
      } else if (key == "tls-port") {
        if (!ParsePort(value, &n->tls_port)) return corrupt("a bad tls-port");
      } else if (key == "tcp-port") {
        if (!ParsePort(value, &n->port)) return corrupt("a bad tcp-port");
      }
    }
    // Flags.
    std::istringstream flags(w[2]);
    std::string f;
    while (std::getline(flags, f, ',')) {
      if (f == "myself") {
        if (myself_ != nullptr && myself_ != n) return corrupt("two myself nodes");
        myself_ = n;
        n->flags |= kNodeMyself;
      } else if (f == "master") {
        n->flags |= kNodeMaster;
      } else if (f == "slave") {
        n->flags |= kNodeSlave;
      } else if (f == "fail?") {
        n->flags |= kNodePfail;
      } else if (f == "fail") {
        n->flags |= kNodeFail;
        n->fail_time = UnixTimeMs();
      } else if (f == "handshake") {
        n->flags |= kNodeHandshake;
      } else if (f == "noaddr") {
        n->flags |= kNodeNoAddr;
      } else if (f == "nofailover") {
        n->flags |= kNodeNoFailover;
      } else if (f != "noflags") {
        return corrupt("unknown flag " + f);
      }
    }
    if (w[3] != "-") {
      // (Else a node of that name would be made, and saved, and the file
      // refused at the next start.)
      if (!ValidNodeName(w[3])) return corrupt("a bad primary id");
      pending.push_back({n, w[3]});
    }
    if (!ParseUint64(w[6], &n->config_epoch)) return corrupt("a bad config epoch");
    // (ping_sent, pong_received: a fresh start; link state: ignored.)
    n->pong_received = UnixTimeMs();
    for (size_t i = 8; i < w.size(); i++) {
      const std::string& s = w[i];
      if (s.size() > 2 && s.front() == '[' && s.back() == ']') {
        const size_t arrow = s.find("->-");
        const size_t back = s.find("-<-");
        int slot;
        if (arrow != std::string::npos && ParseSlot(s.substr(1, arrow - 1), &slot) &&
            ValidNodeName(s.substr(arrow + 3, s.size() - arrow - 4)))
          migrating.emplace_back(slot, s.substr(arrow + 3, s.size() - arrow - 4));
        else if (back != std::string::npos && ParseSlot(s.substr(1, back - 1), &slot) &&
                 ValidNodeName(s.substr(back + 3, s.size() - back - 4)))
          importing.emplace_back(slot, s.substr(back + 3, s.size() - back - 4));
        else
          return corrupt("a bad open slot " + s);
        continue;
      }
      const size_t dash = s.find('-');
      int start, end;
      if (dash == std::string::npos) {
        if (!ParseSlot(s, &start)) return corrupt("a bad slot " + s);
        end = start;
      } else if (!ParseSlot(s.substr(0, dash), &start) || !ParseSlot(s.substr(dash + 1), &end) || end < start) {
        return corrupt("a bad slot range " + s);
      }
      for (int j = start; j <= end; j++) {
        DelSlot(j);
        AddSlot(n, j);
      }
    }
  }
  if (myself_ == nullptr) return corrupt("no myself node");
  for (const Pending& p : pending) {
    Node* primary = Lookup(p.primary);
    if (primary == nullptr) primary = CreateNode(p.primary, 0);
    p.node->primary = primary;
    AddReplica(primary, p.node);
  }
  for (const auto& [slot, id] : migrating)
    if (Node* n = Lookup(id)) migrating_to_[static_cast<size_t>(slot)] = n;
  for (const auto& [slot, id] : importing)
    if (Node* n = Lookup(id)) importing_from_[static_cast<size_t>(slot)] = n;
  const uint64_t max = MaxEpoch();
  if (max > current_epoch_) current_epoch_ = max;
  return true;
}

void ClusterBus::VerifyWithData(const std::vector<bool>& slots_with_keys) {
  std::lock_guard<std::mutex> lock(mu_);
  // (A replica's data is its primary's, whatever the slots.)
  if (myself_->is_replica()) return;
  int changed = 0;
  for (int j = 0; j < static_cast<int>(kNumSlots) && j < static_cast<int>(slots_with_keys.size()); j++) {
    const size_t s = static_cast<size_t>(j);
    if (!slots_with_keys[s] || slots_[s] == myself_ || importing_from_[s] != nullptr) continue;
    changed++;
    if (slots_[s] == nullptr) {
      LOG_NOTICE("I have keys for unassigned slot %d. Taking responsibility for it.", j);
      AddSlot(myself_, j);
    } else {
      LOG_NOTICE("I have keys for slot %d, but the slot is assigned to another node. Setting it to importing state.",
                 j);
      importing_from_[s] = slots_[s];
    }
  }
  if (changed == 0) return;
  SaveNow(true);
  UpdateState();
}

void ClusterBus::SaveNow(bool fsync) {
  std::string err;
  if (!SaveConfigFile(fsync || todo_fsync_, &err)) LOG_WARNING("Could not save the cluster configuration: %s", err.c_str());
  todo_save_ = todo_fsync_ = false;
}

ClusterBus::Change::~Change() {
  if (!bus_.save_on_release_) return;
  // (With what the bus had left to save: an epoch the command bumped
  // (NeedSave(true)) is made durable before the reply too.)
  ConfigWrite w = bus_.TakeConfig(bus_.fsync_on_release_ || bus_.todo_fsync_);
  bus_.save_on_release_ = bus_.fsync_on_release_ = false;
  bus_.todo_save_ = bus_.todo_fsync_ = false;
  lock_.unlock();
  std::string err;
  if (!bus_.WriteConfig(std::move(w), &err)) LOG_WARNING("Could not save the cluster configuration: %s", err.c_str());
}

ClusterBus::ConfigWrite ClusterBus::TakeConfig(bool fsync) {
  ConfigWrite w;
  for (auto& [name, n] : nodes_) {
    if (n->in_handshake()) continue;
    w.text += NodeLine(*n, true);
    w.text += '\n';
  }
  w.text += "vars currentEpoch " + std::to_string(current_epoch_) + " lastVoteEpoch " +
            std::to_string(last_vote_epoch_) + "\n";
  w.gen = ++config_gen_;
  w.fsync = fsync;
  w.path = settings_.config_file;  // (settings_ changes under mu_: CONFIG SET)
  return w;
}

bool ClusterBus::SaveConfigFile(bool fsync, std::string* err) { return WriteConfig(TakeConfig(fsync), err); }

bool ClusterBus::WriteConfig(ConfigWrite w, std::string* err) {
  std::lock_guard<std::mutex> file_lock(file_mu_);
  const std::string& path = w.path;
  if (w.gen <= written_gen_) {
    // A newer text is there already (it has this change too).
    if (!w.fsync || fsynced_gen_ >= w.gen) return true;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    const bool ok = fd >= 0 && ::fsync(fd) == 0;
    if (fd >= 0) close(fd);
    if (!ok) *err = std::string("Could not sync the cluster configuration: ") + strerror(errno);
    if (ok) fsynced_gen_ = written_gen_;
    return ok;
  }
  // Nothing changed (a SETSLOT that found the slot as asked): no write.
  if (!w.fsync && w.text == written_text_) {
    written_gen_ = w.gen;
    return true;
  }
  const std::string& text = w.text;
  const std::string tmp = path + ".tmp-" + std::to_string(getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *err = "Could not open " + tmp + ": " + strerror(errno);
    return false;
  }
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = write(fd, text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      *err = std::string("Could not write the cluster configuration: ") + strerror(errno);
      close(fd);
      unlink(tmp.c_str());
      return false;
    }
    off += static_cast<size_t>(n);
  }
  // Made durable when an epoch or a vote changed (Redis's
  // CLUSTER_TODO_FSYNC_CONFIG); a slot's owner only written (a resharding
  // changes five per slot moved).
  if ((w.fsync && ::fsync(fd) != 0) || close(fd) != 0 || rename(tmp.c_str(), path.c_str()) != 0) {
    *err = std::string("Could not save the cluster configuration: ") + strerror(errno);
    unlink(tmp.c_str());
    return false;
  }
  if (w.fsync) {
    // The rename made durable too (Redis's fsyncFileDir): else a crash
    // could bring the old file back, an epoch or a vote with it.
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const bool synced = dfd >= 0 && ::fsync(dfd) == 0;
    const int why = errno;
    if (dfd >= 0) close(dfd);
    if (!synced) LOG_WARNING("Could not sync the cluster configuration's directory %s: %s", dir.c_str(), strerror(why));
  }
  written_gen_ = w.gen;
  if (w.fsync) fsynced_gen_ = w.gen;
  written_text_ = std::move(w.text);
  // The lock moves to the new file (the old one's inode is gone).
  const int lock = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0) {
    if (lock_fd_ >= 0) close(lock_fd_);
    lock_fd_ = lock;
  } else if (lock >= 0) {
    close(lock);
  }
  return true;
}

}  // namespace peregrine::cluster
