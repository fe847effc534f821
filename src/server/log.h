// Logging in redis-server's format ("pid:M 22 Nov 2026 04:04:46.123 * text"),
// with Redis's levels. Call from any thread; each line is written with one
// write(2).
#pragma once

#include <string>

namespace peregrine {

enum class LogLevel { kDebug = 0, kVerbose = 1, kNotice = 2, kWarning = 3, kNothing = 4 };

// Sets the threshold and the destination ("" = standard output).
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
bool SetLogFile(const std::string& path, std::string* err);
// The role letter after the pid, as Redis writes it: 'M' a primary, 'S' a
// replica ('C' and 'X', Redis's for a child and Sentinel, are not used).
void SetLogRole(char role);

void Log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

#define LOG_DEBUG(...) ::peregrine::Log(::peregrine::LogLevel::kDebug, __VA_ARGS__)
#define LOG_VERBOSE(...) ::peregrine::Log(::peregrine::LogLevel::kVerbose, __VA_ARGS__)
#define LOG_NOTICE(...) ::peregrine::Log(::peregrine::LogLevel::kNotice, __VA_ARGS__)
#define LOG_WARNING(...) ::peregrine::Log(::peregrine::LogLevel::kWarning, __VA_ARGS__)

}  // namespace peregrine
