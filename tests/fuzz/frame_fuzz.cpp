// libFuzzer target for what the host reads from a worker: the frame decoder (any byte stream,
// fed in pieces of fuzzer-chosen sizes) and the shared-memory ring's checks of positions the
// peer publishes. Decoding may fail only with cppless::protocol_error; every frame it yields
// has a valid kind and a payload of exactly the announced size within the limit; the ring never
// reports more than its capacity nor a span outside its storage, however the peer's positions
// move. ASan/UBSan catch the rest.
//
// Built twice from this file, like archive_fuzz: the fuzzer, and (CPPLESS_FUZZ_SEED_MAIN) a
// program that writes seed inputs (valid frame streams) for the current wire format.
#include "local/shm_channel.hpp"

#include <cppless/error.hpp>
#include "core/protocol.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using cppless::protocol::frame_decoder;
using cppless::protocol::frame_header;

constexpr std::size_t fuzz_limit = 1 << 16;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "frame_fuzz: %s\n", what);
    std::abort();
  }
}

void fuzz_decoder(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return;
  const std::size_t piece = 1 + data[0] % 97;  // bytes fed at a time
  ++data;
  --size;
  frame_decoder decoder(fuzz_limit);
  cppless::byte_buffer payload;
  try {
    std::size_t at = 0;
    while (at < size) {
      const std::size_t n = std::min(piece, size - at);
      const std::size_t used = decoder.feed(reinterpret_cast<const std::byte*>(data + at), n);
      check(used <= n, "feed took more than it was given");
      at += used;
      if (decoder.ready()) {
        frame_header h;
        decoder.take(h, payload);
        check(h.magic == cppless::protocol::magic, "frame with a wrong magic");
        check(h.kind >= cppless::protocol::frame_kind::call && h.kind <= cppless::protocol::frame_kind::started,
              "frame of an unknown kind");
        check(h.payload_size <= fuzz_limit && payload.size() == h.payload_size, "payload size mismatch");
        // A result's failure payload is decoded into a typed error, never trusted.
        check(cppless::protocol::error_from(h.code, payload.span(), "fuzz") != nullptr || h.code == cppless::protocol::status::ok,
              "a failure status without an error");
      } else if (used == 0) {
        break;
      }
    }
  } catch (const cppless::protocol_error&) {
  }
}

// Ring positions published by a hostile peer: each step either moves the peer's position
// arbitrarily or performs an operation of ours; what we see must stay within bounds.
void fuzz_ring(const std::uint8_t* data, std::size_t size) {
  using namespace cppless::local;
  auto positions = std::make_unique<ring_positions>();
  std::vector<std::byte> storage(ring_capacity);
  ring_cursor reader{}, writer{};
  ring as_reader(positions.get(), storage.data(), &reader);
  ring as_writer(positions.get(), storage.data(), &writer);
  std::vector<std::byte> chunk(ring_capacity + 100);
  for (std::size_t i = 0; i + 9 <= size; i += 9) {
    std::uint64_t value;
    std::memcpy(&value, data + i + 1, sizeof value);
    switch (data[i] % 6) {
      case 0: positions->write_pos.store(value); break;  // a hostile writer
      case 1: positions->read_pos.store(value); break;   // a hostile reader
      case 2: {
        auto span = as_reader.peek();
        check(span.size() <= ring_capacity, "peek larger than the ring");
        check(span.empty() || (span.data() >= storage.data() && span.data() + span.size() <= storage.data() + ring_capacity),
              "peek outside the ring");
        if (!span.empty()) as_reader.consume(value % (span.size() + 1));
        break;
      }
      case 3: check(as_reader.readable() <= ring_capacity, "readable beyond capacity"); break;
      case 4: {
        const std::size_t want = value % chunk.size();
        const std::size_t n = as_writer.write_some(chunk.data(), want);
        check(n <= want && n <= ring_capacity, "wrote more than fits");
        break;
      }
      case 5: check(as_writer.writable() <= ring_capacity, "writable beyond capacity"); break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  if (data[0] & 1) fuzz_ring(data + 1, size - 1);
  else fuzz_decoder(data + 1, size - 1);
  return 0;
}

#ifdef CPPLESS_FUZZ_SEED_MAIN
// Writes valid frame streams (and a few ring scripts) as seeds into the directory argv[1].
int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <seed-dir>\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  std::string mkdir = "mkdir -p '" + dir + "'";
  if (std::system(mkdir.c_str()) != 0) return 1;
  int n = 0;
  auto write = [&](const std::vector<std::uint8_t>& bytes) {
    const std::string path = dir + "/seed-" + std::to_string(n++);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return false;
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    return std::fclose(f) == 0;
  };
  for (int kind = 1; kind <= 5; ++kind) {
    for (std::uint32_t size : {0u, 1u, 48u, 300u}) {
      std::vector<std::uint8_t> bytes{0, static_cast<std::uint8_t>(kind * 7)};  // decoder, piece size
      frame_header h;
      h.kind = static_cast<cppless::protocol::frame_kind>(kind);
      h.code = kind == 2 ? cppless::protocol::status::remote_exception : cppless::protocol::status::ok;
      h.payload_size = size;
      const auto* p = reinterpret_cast<const std::uint8_t*>(&h);
      for (int frames = 0; frames < 2; ++frames) {
        bytes.insert(bytes.end(), p, p + sizeof h);
        for (std::uint32_t i = 0; i < size; ++i) bytes.push_back(static_cast<std::uint8_t>(i));
      }
      if (!write(bytes)) return 1;
    }
  }
  for (int script = 0; script < 4; ++script) {
    std::vector<std::uint8_t> bytes{1};
    for (int step = 0; step < 12; ++step) {
      bytes.push_back(static_cast<std::uint8_t>((step + script) % 6));
      std::uint64_t v = (std::uint64_t{1} << (step * 5 % 64)) + static_cast<std::uint64_t>(script);
      const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
      bytes.insert(bytes.end(), p, p + 8);
    }
    if (!write(bytes)) return 1;
  }
  return 0;
}
#endif
