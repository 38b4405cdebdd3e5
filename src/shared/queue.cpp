// queue pops: a script for the common case (an item is there), BLMOVE into the client's slot to
// wait; after a lost reply the slot tells whether the item was taken. The slot is emptied as soon
// as the item is in hand (so the common case never has to).
#include <cppless/shared/queue.hpp>

namespace cppless::shared::detail {

std::optional<std::string> pop_item(const object_ref& obj, const kind_info& kind, clock::time_point deadline, bool block) {
  session ses(obj);
  reply r = ses.script(obj, script::queue_pop, kind, true, {});
  if (r.int_at(0) == 1) return r.str_at(1);
  if (!block) return std::nullopt;
  const std::string items = obj.sub_key("l");
  const std::string slot = obj.sub_key("p" + ses.client_id());
  for (;;) {
    std::optional<reply> got = ses.blocking({"BLMOVE", items, slot, "LEFT", "RIGHT"}, deadline);
    if (got) {
      if (got->is_nil()) return std::nullopt;
      ses.command({"DEL", slot});  // delivered
      return std::move(got->str);
    }
    // Connection lost while blocked: if the move happened, the item is in the slot.
    reply held = ses.command({"LINDEX", slot, "0"});
    if (!held.is_nil()) {
      ses.command({"DEL", slot});
      return std::move(held.str);
    }
    if (clock::now() >= deadline) return std::nullopt;
  }
}

}  // namespace cppless::shared::detail
