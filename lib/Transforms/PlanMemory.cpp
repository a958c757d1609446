// tgc-plan-memory: an entry's temporaries in one arena, with memory reused by liveness
// (docs/kernels.md, Temporaries).
//
// After bufferization every temporary of a model is a `memref.alloc` in an entry
// function (kernels write into their callers' buffers). The runtime allocates each
// entry's arena once per instance; here each static allocation becomes a view at a
// planned offset of it. Live ranges are positions in the entry's body, and offsets are
// chosen greedily by size, as TFLite's and PyTorch's static planners do.
#include "BufferAliases.h"
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tgc {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// The arena's alignment: a cache line, and at least what any allocation asks for.
constexpr int64_t kArenaAlignment = 64;

/// A temporary placed in the arena: live over positions [first, last] of the entry's
/// body, at byte `offset`.
struct Buffer {
  memref::AllocOp alloc;
  int64_t bytes = 0;
  unsigned first = 0;
  unsigned last = 0;
  int64_t offset = 0;
};

struct Plan {
  SmallVector<Buffer> buffers;
  int64_t arenaBytes = 0;
  int64_t bufferBytes = 0;
  int64_t unplanned = 0;
  /// Temporaries of dynamic size placed at run time (placeDynamic).
  int64_t dynamicBuffers = 0;
};

int64_t alignTo(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

/// The position in `body` of the op that holds `op` (itself, or the op of `body` whose
/// regions contain it).
unsigned positionIn(Block &body, Operation *op, const DenseMap<Operation *, unsigned> &positions) {
  Operation *top = body.findAncestorOpInBlock(*op);
  assert(top && "an op of the entry is in its body");
  return positions.lookup(top);
}

/// The last position at which `alloc`'s memory is used, or nullopt when an alias may
/// outlive the entry's ops (visitAliasUsers).
std::optional<unsigned> lastUse(memref::AllocOp alloc, Block &body,
                                const DenseMap<Operation *, unsigned> &positions) {
  unsigned last = positionIn(body, alloc, positions);
  if (!visitAliasUsers(alloc.getResult(), [&](Operation *user) {
        last = std::max(last, positionIn(body, user, positions));
      }))
    return std::nullopt;
  return last;
}

/// Places each buffer, largest first, at the lowest offset of the smallest gap left
/// between the buffers already placed whose live ranges overlap its own.
void placeBuffers(Plan &plan) {
  SmallVector<Buffer *> order;
  for (Buffer &buffer : plan.buffers)
    order.push_back(&buffer);
  // A total order (buffers are in program order), so the plan is deterministic.
  llvm::sort(order, [](const Buffer *a, const Buffer *b) {
    if (a->bytes != b->bytes)
      return a->bytes > b->bytes;
    return a < b;
  });
  SmallVector<Buffer *> placed;
  for (Buffer *buffer : order) {
    SmallVector<std::pair<int64_t, int64_t>> taken; // [begin, end) of overlapping buffers
    for (Buffer *other : placed)
      if (other->first <= buffer->last && buffer->first <= other->last)
        taken.push_back({other->offset, other->offset + other->bytes});
    llvm::sort(taken);
    int64_t best = -1, bestGap = std::numeric_limits<int64_t>::max(), cursor = 0;
    for (auto [begin, end] : taken) {
      int64_t gap = begin - cursor;
      if (gap >= buffer->bytes && gap < bestGap) {
        best = cursor;
        bestGap = gap;
      }
      cursor = std::max(cursor, end);
    }
    buffer->offset = best >= 0 ? best : cursor;
    plan.arenaBytes = std::max(plan.arenaBytes, buffer->offset + buffer->bytes);
    placed.push_back(buffer);
  }
}

/// Whether `value` can be computed at the start of `body`: an argument of the entry, or
/// the result of a side-effect-free op of `body` whose operands can (memref.dim of an
/// argument, index arithmetic). Collects those ops into `chain`, operands first.
bool hoistable(Value value, Block &body, SetVector<Operation *> &chain) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == &body;
  Operation *def = value.getDefiningOp();
  if (chain.contains(def))
    return true;
  if (def->getBlock() != &body || def->getNumRegions() != 0 || !isMemoryEffectFree(def))
    return false;
  for (Value operand : def->getOperands())
    if (!hoistable(operand, body, chain))
      return false;
  chain.insert(def);
  return true;
}

/// A temporary of dynamic size placed at run time: live over positions [first, last],
/// with a size estimate (dynamic dimensions counted as kDynamicEstimate) that orders
/// the placement.
struct DynamicBuffer {
  memref::AllocOp alloc;
  int64_t estimate = 0;
  unsigned first = 0;
  unsigned last = 0;
};

constexpr int64_t kDynamicEstimate = 128;

/// Places the dynamic temporaries above the static ones, in code computed at the start
/// of the entry: in order of decreasing estimate, each at the end of the highest buffer
/// placed before it that it overlaps (no gaps are reused: sizes are known only at run
/// time). The temporaries go into the arena when it holds them all, else into one
/// allocation of the call; either way the entry stores what it needed into `request`,
/// and the runtime grows the arena to it for the next call.
void placeDynamic(func::FuncOp func, MutableArrayRef<DynamicBuffer> buffers, int64_t staticBytes,
                  Value arena, Value request, const SetVector<Operation *> &chain,
                  DataLayout &layout) {
  Block &body = func.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  Location loc = func.getLoc();
  IRMapping hoisted;
  for (Operation *op : chain)
    b.clone(*op, hoisted);
  auto constant = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  Value alignMinusOne = constant(kArenaAlignment - 1), align = constant(kArenaAlignment);
  SmallVector<unsigned> order = llvm::to_vector(llvm::seq<unsigned>(0, buffers.size()));
  llvm::stable_sort(
      order, [&](unsigned x, unsigned y) { return buffers[x].estimate > buffers[y].estimate; });
  SmallVector<Value> offsets(buffers.size()), ends(buffers.size());
  SmallVector<unsigned> placed;
  Value total = constant(0);
  for (unsigned i : order) {
    DynamicBuffer &buffer = buffers[i];
    MemRefType type = buffer.alloc.getType();
    // Bytes: the static part of the shape times each dynamic size, 64-byte aligned.
    int64_t staticPart = int64_t(layout.getTypeSize(type.getElementType()));
    for (int64_t d : type.getShape())
      if (!ShapedType::isDynamic(d))
        staticPart *= d;
    Value bytes = constant(staticPart);
    for (Value size : buffer.alloc.getDynamicSizes())
      bytes = arith::MulIOp::create(b, loc, bytes, hoisted.lookupOrDefault(size));
    bytes = arith::MulIOp::create(
        b, loc,
        arith::DivUIOp::create(b, loc, arith::AddIOp::create(b, loc, bytes, alignMinusOne), align),
        align);
    Value offset = constant(0);
    for (unsigned j : placed)
      if (buffers[j].first <= buffer.last && buffer.first <= buffers[j].last)
        offset = arith::MaxUIOp::create(b, loc, offset, ends[j]);
    offsets[i] = offset;
    ends[i] = arith::AddIOp::create(b, loc, offset, bytes);
    total = arith::MaxUIOp::create(b, loc, total, ends[i]);
    placed.push_back(i);
  }
  Value needed = arith::AddIOp::create(b, loc, constant(staticBytes), total);
  memref::StoreOp::create(b, loc, arith::IndexCastOp::create(b, loc, b.getI64Type(), needed),
                          request, ValueRange());
  Value capacity = memref::DimOp::create(b, loc, arena, 0);
  Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, needed, capacity);
  auto block = scf::IfOp::create(
      b, loc, fits, [&](OpBuilder &nb, Location l) { scf::YieldOp::create(nb, l, arena); },
      [&](OpBuilder &nb, Location l) {
        Value fresh = memref::AllocOp::create(nb, l, cast<MemRefType>(arena.getType()), needed,
                                              nb.getI64IntegerAttr(kArenaAlignment));
        scf::YieldOp::create(nb, l, fresh);
      });
  for (auto [buffer, offset] : llvm::zip_equal(buffers, offsets)) {
    OpBuilder at(buffer.alloc);
    Value shifted = arith::AddIOp::create(at, buffer.alloc.getLoc(), offset,
                                          arith::ConstantIndexOp::create(at, loc, staticBytes));
    auto view = memref::ViewOp::create(at, buffer.alloc.getLoc(), buffer.alloc.getType(),
                                       block.getResult(0), shifted, buffer.alloc.getDynamicSizes());
    buffer.alloc.replaceAllUsesWith(view.getResult());
    buffer.alloc.erase();
  }
}

/// Plans `func`'s temporaries, rewrites them as views of new arguments (the arena and
/// the request of its size, see placeDynamic) and returns what was planned.
Plan planEntry(func::FuncOp func) {
  Plan plan;
  Block &body = func.getBody().front();
  DenseMap<Operation *, unsigned> positions;
  for (auto [i, op] : llvm::enumerate(body))
    positions[&op] = i;
  DataLayout layout = DataLayout::closest(func);
  SmallVector<DynamicBuffer> dynamic;
  SetVector<Operation *> chain;
  func.walk([&](memref::AllocOp alloc) {
    MemRefType type = alloc.getType();
    std::optional<unsigned> last;
    // One place per allocation: not for one made in each iteration of a parallel loop
    // (only loops whose iterations run one after the other may reuse it).
    bool sequential = true;
    for (Operation *parent = alloc->getParentOp(); parent != func; parent = parent->getParentOp())
      sequential &= isa<scf::ForOp, scf::IfOp, scf::WhileOp>(parent);
    bool placeable =
        sequential && type.getLayout().isIdentity() &&
        alloc.getAlignment().value_or(1) <= kArenaAlignment &&
        (type.getElementType().isIntOrIndexOrFloat() || isa<ComplexType>(type.getElementType()));
    // A dynamic size must be known at the start of the entry, where the offsets are
    // computed.
    SetVector<Operation *> sizes;
    if (!type.hasStaticShape() && placeable) {
      sizes = chain;
      placeable = alloc->getBlock() == &body &&
                  llvm::all_of(alloc.getDynamicSizes(),
                               [&](Value size) { return hoistable(size, body, sizes); });
    }
    if (placeable)
      last = lastUse(alloc, body, positions);
    if (!last) {
      ++plan.unplanned;
      return;
    }
    unsigned first = positionIn(body, alloc, positions);
    int64_t elementBytes = int64_t(layout.getTypeSize(type.getElementType()));
    if (!type.hasStaticShape()) {
      chain = std::move(sizes);
      int64_t estimate = elementBytes;
      for (int64_t d : type.getShape())
        estimate *= ShapedType::isDynamic(d) ? kDynamicEstimate : d;
      dynamic.push_back({alloc, estimate, first, *last});
      return;
    }
    Buffer buffer;
    buffer.alloc = alloc;
    buffer.bytes = alignTo(type.getNumElements() * elementBytes);
    buffer.first = first;
    buffer.last = *last;
    plan.bufferBytes += buffer.bytes;
    plan.buffers.push_back(buffer);
  });
  placeBuffers(plan);
  plan.dynamicBuffers = int64_t(dynamic.size());

  MLIRContext *ctx = func.getContext();
  auto kind = [&](StringRef name) {
    return DictionaryAttr::get(
        ctx, {NamedAttribute(StringAttr::get(ctx, attr::kKind), StringAttr::get(ctx, name))});
  };
  unsigned at = func.getNumArguments();
  if (failed(func.insertArguments(
          {at, at},
          {MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8)),
           MemRefType::get({}, IntegerType::get(ctx, 64))},
          {kind("arena"), kind("arena_request")}, {func.getLoc(), func.getLoc()})))
    llvm_unreachable("a function without a body has no temporaries");
  Value arena = func.getArgument(at), request = func.getArgument(at + 1);
  for (Buffer &buffer : plan.buffers) {
    OpBuilder b(buffer.alloc);
    Location loc = buffer.alloc.getLoc();
    Value offset = arith::ConstantIndexOp::create(b, loc, buffer.offset);
    auto view = memref::ViewOp::create(b, loc, buffer.alloc.getType(), arena, offset, ValueRange());
    buffer.alloc.replaceAllUsesWith(view.getResult());
    buffer.alloc.erase();
  }
  if (!dynamic.empty())
    placeDynamic(func, dynamic, alignTo(plan.arenaBytes), arena, request, chain, layout);
  return plan;
}

struct PlanMemoryPass : public tgc::impl::PlanMemoryPassBase<PlanMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto abiAttr = module->getAttrOfType<DictionaryAttr>(abi::kAbi);
    auto entries = abiAttr ? abiAttr.getAs<DictionaryAttr>(abi::kEntriesKey) : DictionaryAttr();
    if (!entries) {
      module.emitError("tgc-plan-memory needs the tgc.abi attribute that tgc-prepare-entries "
                       "records");
      return signalPassFailure();
    }
    Builder b(module.getContext());
    SmallVector<NamedAttribute> memory;
    for (NamedAttribute entry : entries) {
      auto symbol = dyn_cast<StringAttr>(entry.getValue());
      auto func = symbol ? module.lookupSymbol<func::FuncOp>(symbol) : func::FuncOp();
      if (!func || func.isExternal()) {
        module.emitError() << "tgc.abi names the " << entry.getName() << " entry "
                           << entry.getValue() << ", which the module does not define";
        return signalPassFailure();
      }
      if (!func.getBody().hasOneBlock()) {
        func.emitError("tgc-plan-memory: entries with control flow between blocks are not "
                       "supported");
        return signalPassFailure();
      }
      Plan plan = planEntry(func);
      memory.push_back(b.getNamedAttr(
          entry.getName(),
          b.getDictionaryAttr(
              {b.getNamedAttr(abi::kArenaBytesKey, b.getI64IntegerAttr(plan.arenaBytes)),
               b.getNamedAttr(abi::kBuffersKey, b.getI64IntegerAttr(int64_t(plan.buffers.size()))),
               b.getNamedAttr(abi::kBufferBytesKey, b.getI64IntegerAttr(plan.bufferBytes)),
               b.getNamedAttr(abi::kUnplannedKey, b.getI64IntegerAttr(plan.unplanned)),
               b.getNamedAttr(abi::kDynamicBuffersKey,
                              b.getI64IntegerAttr(plan.dynamicBuffers))})));
    }
    NamedAttrList updated(abiAttr);
    updated.set(abi::kMemoryKey, b.getDictionaryAttr(memory));
    module->setAttr(abi::kAbi, updated.getDictionary(module.getContext()));
  }
};

} // namespace
