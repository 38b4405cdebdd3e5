// The frame decoder takes bytes in any split and rejects garbage with a protocol error.
#include <cppless/error.hpp>
#include "core/protocol.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

std::vector<std::byte> encode(const cppless::protocol::frame_header& h, const std::string& payload) {
  std::vector<std::byte> out(sizeof h + payload.size());
  std::memcpy(out.data(), &h, sizeof h);
  std::memcpy(out.data() + sizeof h, payload.data(), payload.size());
  return out;
}

TEST(FrameDecoder, AnySplitYieldsTheSameFrames) {
  cppless::protocol::frame_header h;
  h.kind = cppless::protocol::frame_kind::call;
  h.call_id = 9;
  const std::string payload = "payload bytes";
  h.payload_size = static_cast<std::uint32_t>(payload.size());
  auto bytes = encode(h, payload);
  h.payload_size = 0;
  auto second = encode(h, "");
  bytes.insert(bytes.end(), second.begin(), second.end());
  for (std::size_t chunk = 1; chunk <= bytes.size(); ++chunk) {
    cppless::protocol::frame_decoder decoder;
    int frames = 0;
    for (std::size_t at = 0; at < bytes.size();) {
      std::size_t n = std::min(chunk, bytes.size() - at);
      at += decoder.feed(bytes.data() + at, n);
      if (decoder.ready()) {
        cppless::protocol::frame_header got;
        cppless::byte_buffer body;
        decoder.take(got, body);
        EXPECT_EQ(got.call_id, 9u);
        EXPECT_EQ(body.size(), frames == 0 ? payload.size() : 0u);
        ++frames;
      }
    }
    EXPECT_EQ(frames, 2) << "chunk " << chunk;
  }
}

TEST(FrameDecoder, BadMagicAndHugePayloadAreRejected) {
  cppless::protocol::frame_header h;
  h.magic = 0xdeadbeef;
  auto bytes = encode(h, "");
  cppless::protocol::frame_decoder decoder;
  EXPECT_THROW(decoder.feed(bytes.data(), bytes.size()), cppless::protocol_error);
  cppless::protocol::frame_header big;
  big.payload_size = 0xffffffffu;
  bytes = encode(big, "");
  cppless::protocol::frame_decoder other;
  EXPECT_THROW(other.feed(bytes.data(), bytes.size()), cppless::protocol_error);
}

TEST(FrameErrors, RoundTripKeepsTheType) {
  using namespace cppless::protocol;
  cppless::byte_buffer payload;
  encode_failure(status::remote_exception, "std::out_of_range", "index 7", payload);
  auto error = error_from(status::remote_exception, payload.span(), "fn");
  try {
    std::rethrow_exception(error);
  } catch (const cppless::remote_error& e) {
    EXPECT_EQ(e.remote_type(), "std::out_of_range");
    EXPECT_NE(std::string(e.what()).find("index 7"), std::string::npos);
  }
  status code;
  encode_error(std::make_exception_ptr(cppless::timeout_error("too slow")), code, payload);
  EXPECT_EQ(code, status::timeout);
  EXPECT_THROW(std::rethrow_exception(error_from(code, payload.span(), "fn")), cppless::timeout_error);
}

}  // namespace
