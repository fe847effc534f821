// The append-only file's formats (Redis 7's multi-part AOF, docs/persistence.md):
// the manifest that lists a directory's files, commands as RESP arrays of
// bulk strings, and the reader that takes them back, telling a cut-off tail
// from a malformed file. Pure functions of bytes: no files, no threads.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace peregrine {

// appendonly.aof.manifest: one line per file, "file <name> seq <n> type <t>"
// (t: 'b' base, 'h' history, 'i' incremental), the base first, then the
// history, then the incremental files in the order they are replayed.
struct AofManifest {
  struct File {
    std::string name;
    int64_t seq = 0;
    char type = 'i';
  };
  std::optional<File> base;
  std::vector<File> history;
  std::vector<File> incr;
  // The highest sequence numbers given so far (the next file takes one more).
  int64_t base_seq = 0;
  int64_t incr_seq = 0;

  // Redis's getAofManifestAsString.
  std::string Format() const;
  // Redis's aofLoadManifestFromFile checks and texts: comment lines skipped,
  // "Invalid AOF manifest file format", "File can't be a path, just a
  // filename", "Found duplicate base file information", "Unknown AOF file
  // type", "Found an empty AOF manifest" ...
  static bool Parse(std::string_view text, AofManifest* out, std::string* err);
  // The names files get (Redis 7: "<prefix>.<seq>.base.rdb" or ".base.aof",
  // "<prefix>.<seq>.incr.aof").
  static std::string BaseName(std::string_view prefix, int64_t seq, bool rdb);
  static std::string IncrName(std::string_view prefix, int64_t seq);
};

// Appends a command as Redis writes it to the AOF (catAppendOnlyGenericCommand):
// "*<argc>\r\n" then "$<len>\r\n<bytes>\r\n" per argument.
void AppendRespCommand(std::string* out, std::span<const std::string_view> args);
inline void AppendRespCommand(std::string* out, std::initializer_list<std::string_view> args) {
  AppendRespCommand(out, std::span<const std::string_view>(args.begin(), args.size()));
}

// Commands logged by the holder of one shard, waiting for the file: each
// command in its database, a SELECT put in where the database changes
// (the first command's database is the chunk's: AppendOnlyFile selects it
// if the file is elsewhere).
class AofChunk {
 public:
  bool empty() const { return bytes_.empty(); }
  size_t size() const { return bytes_.size(); }
  int first_db() const { return first_db_; }
  int last_db() const { return last_db_; }
  std::string_view bytes() const { return bytes_; }
  uint64_t commands() const { return commands_; }

  void Add(int db, std::span<const std::string_view> args) {
    Select(db);
    AppendRespCommand(&bytes_, args);
    commands_++;
  }
  void Add(int db, std::initializer_list<std::string_view> args) {
    Add(db, std::span<const std::string_view>(args.begin(), args.size()));
  }
  // Appends another chunk's commands (a transaction's, when it ends).
  void Add(const AofChunk& other) {
    if (other.empty()) return;
    Select(other.first_db_);
    bytes_ += other.bytes_;
    last_db_ = other.last_db_;
    commands_ += other.commands_;
  }
  // Starts the chunk over, keeping its buffer's room (a large one's goes).
  void Clear() {
    if (bytes_.capacity() > (1u << 20)) std::string().swap(bytes_);
    bytes_.clear();
    first_db_ = last_db_ = -1;
    commands_ = 0;
  }

 private:
  void Select(int db);

  std::string bytes_;
  int first_db_ = -1, last_db_ = -1;
  uint64_t commands_ = 0;
};

// Reads commands back from an AOF's bytes, as Redis's loadSingleAppendOnlyFile
// does: lines starting with '#' are annotations and skipped, each command is
// "*<argc>" then argc "$<len>" bulk strings. Feed it the file a piece at a
// time; Next says whether a command is complete, the bytes so far end
// inside one, or the bytes are not an AOF.
class AofReader {
 public:
  enum class Result { kCommand, kNeedMore, kFormatError };
  // Looks for the next command in data[0, len) (`data` starts where the last
  // command ended). On kCommand, args() views into `data` and consumed()
  // says how many bytes it took (annotations before it included).
  Result Next(const char* data, size_t len);
  std::span<const std::string_view> args() const { return args_; }
  size_t consumed() const { return consumed_; }
  // After kNeedMore: at least how many bytes from `data` the command needs
  // (so that a caller can read a large argument at once), or 0 if unknown;
  // and when known, where in `data` the argument being read starts.
  size_t needed() const { return needed_; }
  size_t needed_from() const { return needed_from_; }

 private:
  std::vector<std::string_view> args_;
  size_t consumed_ = 0;
  size_t needed_ = 0;
  size_t needed_from_ = 0;
};

}  // namespace peregrine
