// ReplicationPrimary's full syncs: when the replicas waiting start
// (repl-diskless-sync-delay, -max-replicas), one snapshot for them all, and
// a replica joining a disk-based sync with the stream its sibling kept.
#include "server/replication.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/event_loop.h"

namespace peregrine {
namespace {

ReplicationPrimary::ReplicaInfo Info(uint64_t id, bool disk = false, bool sync = false) {
  ReplicationPrimary::ReplicaInfo info;
  info.client_id = id;
  info.ip = "127.0.0.1";
  info.disk = disk;
  info.sync = sync;
  return info;
}

// A socket for a replica waiting (the primary owns it until the sync).
int Socket() {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  ::close(fds[1]);
  return fds[0];
}

struct Primary {
  ReplicationPrimary repl{2, [](uint32_t) {}};
  Primary() { repl.EnsureBacklog(1 << 20); }
  void Write(std::initializer_list<std::string_view> args) {
    AofChunk chunk;
    chunk.Add(0, args);
    repl.Feed(0, chunk);
  }
};

TEST(ReplicationSync, DisklessWaitsForTheDelayOrTheCount) {
  Primary p;
  const int64_t now = UnixTimeMs();
  EXPECT_FALSE(p.repl.SyncDue(now, true, 5, 0));  // (none waiting)
  p.repl.AttachWaiting(Info(1), 0, Socket());
  EXPECT_FALSE(p.repl.SyncDue(now, true, 5, 0));
  EXPECT_TRUE(p.repl.SyncDue(now + 5000, true, 5, 0));
  EXPECT_TRUE(p.repl.SyncDue(now, true, 0, 0));
  EXPECT_TRUE(p.repl.SyncDue(now, false, 5, 0));  // repl-diskless-sync no: at once
  EXPECT_FALSE(p.repl.SyncDue(now, true, 5, 2));
  p.repl.AttachWaiting(Info(2), 1, Socket());
  EXPECT_TRUE(p.repl.SyncDue(now, true, 5, 2));
  // One that cannot read the diskless form makes it a disk-based sync: at once.
  Primary q;
  q.repl.AttachWaiting(Info(3, /*disk=*/true), 0, Socket());
  EXPECT_TRUE(q.repl.SyncDue(now, true, 5, 0));
}

TEST(ReplicationSync, EveryWaitingReplicaStartsTogether) {
  Primary p;
  p.Write({"PING"});
  p.repl.AttachWaiting(Info(1), 0, Socket());
  p.repl.AttachWaiting(Info(2, /*disk=*/true, /*sync=*/true), 1, Socket());
  ReplicationPrimary::SyncStart s;
  ASSERT_TRUE(p.repl.StartWaiting(&s));
  ASSERT_EQ(s.targets.size(), 2u);
  EXPECT_EQ(s.targets[0].id, 1u);
  EXPECT_FALSE(s.targets[0].sync);
  EXPECT_EQ(s.targets[1].id, 2u);
  EXPECT_TRUE(s.targets[1].sync);
  EXPECT_TRUE(s.disk);  // (one needs the file: both get it)
  EXPECT_EQ(s.offset, p.repl.offset());
  for (const auto& r : p.repl.Replicas()) {
    EXPECT_EQ(r.state, ReplicationPrimary::State::kSendingRdb);
    EXPECT_TRUE(r.disk);
  }
  EXPECT_FALSE(p.repl.StartWaiting(&s));  // (none waits now)
  for (const auto& t : s.targets) ::close(t.fd);
}

TEST(ReplicationSync, AJoinerGetsTheStreamItsSiblingKept) {
  Primary p;
  p.repl.AttachWaiting(Info(1, true), 0, Socket());
  ReplicationPrimary::SyncStart s;
  ASSERT_TRUE(p.repl.StartWaiting(&s));
  const uint64_t at = s.offset;
  p.Write({"SET", "k", "v"});
  // Refused by the job: nothing changes.
  EXPECT_FALSE(p.repl.JoinSync(Info(2), 1, -1, [](uint64_t) { return false; }));
  EXPECT_EQ(p.repl.Replicas().size(), 1u);
  uint64_t told = 0;
  const int fd = Socket();
  ASSERT_TRUE(p.repl.JoinSync(Info(2), 1, fd, [&](uint64_t offset) {
    told = offset;
    return true;
  }));
  EXPECT_EQ(told, at);
  ASSERT_EQ(p.repl.Replicas().size(), 2u);
  // Both go online with the same bytes: the SELECT and the SET.
  p.repl.SyncDone(1, true);
  p.repl.SyncDone(2, true);
  std::string got[2];
  for (uint32_t w = 0; w < 2; w++) {
    p.repl.ServeWorker(
        w, [&](uint64_t id, std::string& bytes) { got[id - 1] += bytes; }, [](uint64_t, auto) {});
  }
  EXPECT_NE(got[0].find("SET"), std::string::npos) << got[0];
  EXPECT_EQ(got[0], got[1]);
  ::close(fd);
  for (const auto& t : s.targets) ::close(t.fd);
}

TEST(ReplicationSync, OnlyReplicasAskingTheSameFilterShareASnapshot) {
  Primary p;
  ReplicationPrimary::ReplicaInfo functions_only = Info(2);
  functions_only.rdb_filter = 1;  // (BgSave::kNoData)
  p.repl.AttachWaiting(Info(1), 0, Socket());
  p.repl.AttachWaiting(functions_only, 1, Socket());
  p.repl.AttachWaiting(Info(3), 1, Socket());
  ReplicationPrimary::SyncStart s;
  ASSERT_TRUE(p.repl.StartWaiting(&s));
  ASSERT_EQ(s.targets.size(), 2u);
  EXPECT_EQ(s.targets[0].id, 1u);
  EXPECT_EQ(s.targets[1].id, 3u);
  EXPECT_EQ(s.rdb_filter, 0);
  // A filtered replica does not join an unfiltered sync; it goes next.
  EXPECT_FALSE(p.repl.JoinSync(functions_only, 1, -1, [](uint64_t) { return true; }));
  for (const auto& t : s.targets) ::close(t.fd);
  p.repl.SyncDone(1, true);
  p.repl.SyncDone(3, true);
  ReplicationPrimary::SyncStart next;
  ASSERT_TRUE(p.repl.StartWaiting(&next));
  ASSERT_EQ(next.targets.size(), 1u);
  EXPECT_EQ(next.targets[0].id, 2u);
  EXPECT_EQ(next.rdb_filter, 1);
  ::close(next.targets[0].fd);
}

TEST(ReplicationSync, NoJoinWithoutASyncRunning) {
  Primary p;
  EXPECT_FALSE(p.repl.JoinSync(Info(1), 0, -1, [](uint64_t) { return true; }));
  EXPECT_TRUE(p.repl.Replicas().empty());
}

// The write groups' tickets (BatchRelay waits on them): a part's is
// released when its group is whole in the stream, and a worker that asked
// is woken then, once.
TEST(ReplicationGates, APartsTicketIsReleasedWhenItsGroupIsWholeAndTheWorkerWoken) {
  std::vector<uint32_t> woken;
  ReplicationPrimary repl{2, [&](uint32_t w) { woken.push_back(w); }};
  repl.EnsureBacklog(1 << 20);
  const uint64_t epoch = repl.order_epoch();
  AofChunk a, b;
  a.Add(0, {"SET", "a", "1"});
  b.Add(0, {"SET", "b", "1"});
  repl.WantRelease(1);
  EXPECT_TRUE(repl.FeedPart(1, 7, 2, 3, epoch, b).empty());
  EXPECT_EQ(repl.released(1), 0u);
  const uint64_t before = repl.offset();
  // (Worker 1 asked, worker 0 did not; the feeder wakes it with its mail.)
  EXPECT_EQ(repl.FeedPart(0, 7, 2, 5, epoch, a), std::vector<uint32_t>{1});
  EXPECT_GT(repl.offset(), before);
  EXPECT_EQ(repl.released(0), 5u);
  EXPECT_EQ(repl.released(1), 3u);
  EXPECT_TRUE(woken.empty());
  // Once: not asked again, not woken again.
  EXPECT_TRUE(repl.FeedPart(0, 8, 1, 6, epoch, a).empty());
  // A part of a group made in an earlier epoch goes as its shard's own.
  repl.FeedPart(1, 8, 2, 4, epoch - 1, b);
  EXPECT_EQ(repl.released(1), 4u);
}

TEST(ReplicationGates, WithoutABacklogAPartIsReleasedAtOnceAndFreeingReleasesWhatWaited) {
  std::vector<uint32_t> woken;
  ReplicationPrimary repl{2, [&](uint32_t w) { woken.push_back(w); }};
  AofChunk a;
  a.Add(0, {"SET", "a", "1"});
  repl.FeedPart(0, 1, 2, 1, repl.order_epoch(), a);
  EXPECT_EQ(repl.released(0), 1u);
  repl.EnsureBacklog(1 << 20);
  repl.FeedPart(0, 2, 2, 2, repl.order_epoch(), a);  // its sibling never comes
  EXPECT_EQ(repl.released(0), 1u);
  repl.WantRelease(0);
  repl.FreeBacklog();
  EXPECT_EQ(repl.released(0), 2u);
  EXPECT_EQ(woken, std::vector<uint32_t>{0});
}

}  // namespace
}  // namespace peregrine
