// BatchRelay: a worker's client commands that run on other workers' shards,
// and the other workers' that run on this one's (docs/transactions.md,
// "Pipelines and reply order"). A client's commands from its first for
// another shard on join one ExecBatch, a relay that goes from worker to
// worker, each running the commands that come next for its shard, the last
// sending the replies home; a relay of reads over several workers goes as a
// read group instead, one part per worker at once, whose replies stand if no
// shard it read changed meanwhile.
//
// Owned by its Worker and used only on its thread (a friend of it: it runs
// commands through Worker::Run with the worker's proxy client, sends mail
// through its ShardRouter, and hands replies to its clients and ClientIo).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/compact_key.h"
#include "server/client.h"
#include "server/command.h"
#include "server/worker_mail.h"

namespace peregrine {

class Worker;

class BatchRelay {
 public:
  explicit BatchRelay(Worker& worker) : worker_(worker) {}
  ~BatchRelay();
  BatchRelay(const BatchRelay&) = delete;
  BatchRelay& operator=(const BatchRelay&) = delete;

  // Appends a command to the client's open relay (opening one whose first
  // stop is `target`), with its first key's probe if made (`key`: the
  // worker that runs it need not hash it again); a PUBLISH's remote part
  // carries the count delivered here. A closed client's goes at once, alone.
  void Add(Client& c, std::span<const std::string_view> args, const CommandSpec* spec, const CompactKey::Probe* key,
           uint32_t target, bool remote_publish, size_t published_here);
  // The client's open relay leaves (as a read group if it can).
  void SendOpen(Client& c);
  // Runs the commands of a batch that come next for this shard, then
  // passes it on (PassOn): to the next command's worker, or home with the
  // replies (all ran, or `stopped`: the rest does not run).
  void Run(ExecBatch* b);
  void PassOn(ExecBatch* b, bool stopped);
  // A batch of this worker's client back: its replies to the client.
  void Finish(ExecBatch* b);
  // Batches for reuse (their buffers keep their room).
  ExecBatch* NewBatch();
  void Recycle(ExecBatch* b);

 private:
  // A relay of reads over several workers as a read group: one part per
  // worker, all sent at once (this worker's run now); false if it touches
  // one worker only. FinishReadPart takes each part back; when all are, the
  // replies go to the client in order if no shard changed since the group
  // left, else the relay runs after all.
  bool SendReadGroup(ExecBatch* relay);
  void FinishReadPart(ExecBatch* part);
  // The first keys of the commands that run here next, prefetched (two or
  // more).
  void Prefetch(const ExecBatch& b);

  Worker& worker_;
  std::vector<ExecBatch*> free_batches_;
  std::vector<size_t> group_cursor_;         // FinishReadPart's scratch
  std::vector<std::string_view> exec_args_;  // scratch: the command of a batch being run
};

}  // namespace peregrine
