// A worker's script busy mode (docs/scripting.md, "Busy scripts"): a script
// past busy-reply-threshold makes the whole server busy. What this owns:
//
// - the busy script of its worker, if any: its caller (not read meanwhile),
//   its kind and whether it wrote (for SCRIPT KILL / FUNCTION KILL), the
//   kill request; from the script's count hook (WhileBusy) the worker answers
//   its other clients -BUSY (but Redis's allow-busy commands), answers other
//   workers' batches for its shard -BUSY and keeps their other mail for later;
// - the serve handshake between a busy script's holder and the workers
//   whose shards it holds (parked): the holder asks them from its hook, and
//   each answers its own clients in busy mode meanwhile (AnswerServeRequest),
//   so that the holder (a PUBLISH, a push serving a blocked client) and the
//   parked worker never touch that worker's clients at once;
// - the connections a parked worker accepts meanwhile, kept out of its client
//   list (which the holder may read) until its shard is back.
//
// Threading: one per Worker, used on that worker's thread, except these
// atomics, which other threads touch:
// - the busy state (0 none; else 1, | 2 once it wrote, | 4 for a function):
//   written by the script's thread (release), read by SCRIPT KILL /
//   FUNCTION KILL on any thread (Kill, acquire);
// - the kill request: set by Kill on any thread (release), read by the
//   script's hook (acquire), cleared when the script ends;
// - the serve request (0 nothing asked, 1 asked, 2 being answered): set to
//   1 and, past the holder's deadline, taken back 1 -> 0 by the thread
//   holding this worker's shard; taken 1 -> 2 and given back 0 by this
//   worker. WaitUntil looks at it with one relaxed load (serve_requested).
// The server-wide count of busy scripts, the running script and its kind
// are the Server's (busy_scripts(), SetRunningScript, busy_function()).
//
// What it asks of its Worker (a friend of it): the loop's ready events, a
// client's socket, its replies and writes, closing a client, the dispatcher's
// checks (Resolve, AccessError), MULTI's queue, the mailbox (its ShardRouter: Pop, the
// lend queue, deferred mail, Send), the client list, the command statistics.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/client.h"
#include "server/command_context.h"

namespace peregrine {

class Worker;

class ScriptBusy {
 public:
  explicit ScriptBusy(Worker& worker) : worker_(worker) {}
  ScriptBusy(const ScriptBusy&) = delete;
  ScriptBusy& operator=(const ScriptBusy&) = delete;

  // --- The script's count hook (lua_api.cc), on this worker's thread ---
  // The running script (of client `caller`; EVAL's or a function's, named
  // `name`, run by `command` since `start_ms`) passed the threshold: the
  // server is busy until Leave.
  void Enter(const Client* caller, bool eval, std::string name, std::span<const std::string_view> command,
             int64_t start_ms);
  // At each hook while busy (`wrote`: the script has written): answers this
  // worker's clients and mail, then asks the parked workers to answer theirs.
  void WhileBusy(bool wrote);
  // The script ended (or was killed).
  void Leave();
  // SCRIPT KILL / FUNCTION KILL asked the busy script to stop, or the
  // server is stopping (SHUTDOWN NOSAVE).
  bool kill_requested() const;

  // --- Any thread ---
  // CommandHost::KillBusyScript: tells this worker's busy script to stop.
  CommandHost::KillResult Kill(bool eval);

  // --- This worker's thread ---
  // Whether this worker answers its clients in busy mode itself: it runs a
  // busy script, or it is parked answering them (AnswerServeRequest).
  bool answering() const { return active_ || parked_serving_; }
  // Parked, answering its clients (a connection accepted now is kept here).
  bool parked_serving() const { return parked_serving_; }
  // A client event in busy mode: reads and answers its commands (-BUSY, or
  // runs an allowed one); the script's caller is left alone.
  void ClientEvent(Client& c, uint32_t events);
  // Whether the holder of this worker's shard asked it to answer its clients.
  bool serve_requested() const { return serve_request_.load(std::memory_order_relaxed) == 1; }
  // Takes the request (false if the holder took it back): answers this
  // worker's clients if `serve` (between commands, shard lent), else
  // acknowledges it unmet (in the middle of a command, whose client must
  // not be read).
  bool AnswerServeRequest(bool serve);
  // A connection accepted while parked_serving(): kept here, out of the
  // worker's client list (which the holder may read), until the shard is
  // back.
  void KeepAdopted(std::unique_ptr<Client> c) { adopted_.push_back(std::move(c)); }
  // A kept connection being freed (null if `c` is not one).
  std::unique_ptr<Client> ReleaseAdopted(const Client& c);
  // The shard is back: the kept connections join the worker's clients.
  void AdoptParked();

 private:
  // The holder's side of the handshake: asks each worker whose shard the
  // running command holds to answer its clients, and waits for the round
  // (at most 50 ms).
  void ServeParkedWorkers();
  // Parked: answers this worker's clients (and, worker 0, its listeners) as
  // WhileBusy does, touching no shard and no client list.
  void ServeWhileParked();
  // One command of a client in busy mode: refused (-BUSY, or the error
  // Redis gives first), queued in its MULTI, or run if allowed (no shard).
  void AnswerCommand(Client& c, std::span<const std::string_view> args);
  // Other workers' mail while busy: -BUSY to their batches for this shard,
  // their other mail kept for after the script (the worker's deferred mail).
  void DrainMail();

  Worker& worker_;
  bool active_ = false;            // this worker runs a busy script (Enter .. Leave)
  const Client* caller_ = nullptr;  // its client (its input is being run up the stack)
  std::atomic<uint8_t> state_{0};
  std::atomic<bool> kill_{false};
  bool parked_serving_ = false;  // ServeWhileParked is answering this worker's clients
  std::atomic<uint8_t> serve_request_{0};
  std::vector<std::unique_ptr<Client>> adopted_;  // KeepAdopted
};

}  // namespace peregrine
