// The interpreter's heap: copy-on-write checkpoints and exact rollback.
#include "Frontend/Python/Variables.h"

#include "mlir/IR/MLIRContext.h"
#include <catch2/catch.hpp>

using namespace tgc::py;

static HeapObject listOf(std::vector<Var> items) {
  HeapObject list;
  list.kind = HeapObject::Kind::List;
  list.items = std::move(items);
  return list;
}

TEST_CASE("A checkpoint keeps the state objects had when it was taken", "[heap]") {
  mlir::MLIRContext ctx;
  Heap heap;
  ObjectId list = heap.allocate(listOf({makeInt(1, &ctx)}));
  Heap checkpoint = heap;
  heap.mutate(list).items.push_back(makeInt(2, &ctx));
  CHECK(heap.get(list).items.size() == 2);
  CHECK(checkpoint.get(list).items.size() == 1);
}

TEST_CASE("Restoring a checkpoint rolls back old objects and keeps new ones", "[heap]") {
  mlir::MLIRContext ctx;
  Heap heap;
  ObjectId cell = heap.allocate(HeapObject{});
  heap.mutate(cell).kind = HeapObject::Kind::Cell;
  heap.mutate(cell).contents = makeStr("before");
  Heap checkpoint = heap;
  heap.mutate(cell).contents = makeStr("branch");
  ObjectId created = heap.allocate(listOf({makeStr("result")}));
  heap.restore(checkpoint);
  CHECK(heap.get(cell).contents->name == "before");
  // What the speculated branch created survives, under its id.
  REQUIRE(heap.size() == 2);
  CHECK(heap.get(created).items[0]->name == "result");
  // The next allocation does not reuse it.
  ObjectId next = heap.allocate(listOf({}));
  CHECK(next != created);
}

TEST_CASE("Attributes keep insertion order and can be erased", "[heap]") {
  HeapObject object;
  object.kind = HeapObject::Kind::Instance;
  object.setAttribute("b", makeBool(true));
  object.setAttribute("a", makeNone());
  object.setAttribute("b", makeBool(false));
  REQUIRE(object.attributes.size() == 2);
  CHECK(object.attributes[0].first == "b");
  CHECK_FALSE(object.getAttribute("b")->boolValue);
  CHECK(object.eraseAttribute("a"));
  CHECK_FALSE(object.eraseAttribute("a"));
  CHECK(object.getAttribute("a") == nullptr);
}
