// Telling a service manager how the server is doing, as redis-server's
// `supervised` directive does: under systemd (Type=notify) READY=1 once the
// data is loaded and clients are served, STATUS= lines, STOPPING=1 when it
// shuts down; under upstart (expect stop) a SIGSTOP to itself when ready.
// `auto` picks systemd when NOTIFY_SOCKET is set, upstart when UPSTART_JOB
// is. Process-wide; any thread may call, each message one datagram.
#pragma once

#include <string_view>

#include "server/config.h"

namespace peregrine::supervise {

// Resolves `mode` (auto) against the environment once, at start (before
// any other thread runs), and remembers it; returns what it resolved to
// (kNo when nothing supervises: systemd without NOTIFY_SOCKET, say).
Config::Supervised Start(Config::Supervised mode);
// Logs what Start found (once the log file is open).
void LogStart();
// The mode Start resolved.
Config::Supervised Mode();

// The server serves clients with its data loaded (a replica: `replica`,
// read-only until its first sync).
void Ready(bool replica);
// Free text for systemctl status (STATUS=...).
void Status(std::string_view text);
// The server is shutting down.
void Stopping();

// Sends `message` ("READY=1\nSTATUS=...\n") to the socket NOTIFY_SOCKET
// names (a path, or '@' for Linux's abstract namespace), as sd_notify(3)
// describes the protocol. False if it is unset or the send failed.
bool Notify(std::string_view message);

}  // namespace peregrine::supervise
