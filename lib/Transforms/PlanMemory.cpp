// tgc-plan-memory: an entry's temporaries in one arena, with memory reused by liveness
// (docs/kernels.md, Temporaries).
//
// After bufferization every temporary of a model is a `memref.alloc` in an entry
// function (kernels write into their callers' buffers). The runtime allocates each
// entry's arena once per instance; here each static allocation becomes a view at a
// planned offset of it. Live ranges are positions in the entry's body, and offsets are
// chosen greedily by size, as TFLite's and PyTorch's static planners do.
#include "tgc/Dialect/Attributes.h"
#include "tgc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

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
/// outlive the entry's ops: it is returned or yielded, deallocated, or passed to an op
/// with a memref result that is not a view of it.
std::optional<unsigned> lastUse(memref::AllocOp alloc, Block &body,
                                const DenseMap<Operation *, unsigned> &positions) {
  unsigned last = positionIn(body, alloc, positions);
  SmallVector<Value> worklist{alloc.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user->hasTrait<mlir::OpTrait::IsTerminator>() || isa<memref::DeallocOp>(user))
        return std::nullopt;
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      bool aliases = llvm::any_of(user->getResultTypes(),
                                  [](Type t) { return isa<BaseMemRefType, TensorType>(t); });
      if (view && view.getViewSource() == value) {
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()))
            worklist.push_back(result);
      } else if (aliases) {
        return std::nullopt;
      }
      last = std::max(last, positionIn(body, user, positions));
    }
  }
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

/// Plans `func`'s static temporaries, rewrites them as views of a new last argument
/// (the arena) and returns what was planned.
Plan planEntry(func::FuncOp func) {
  Plan plan;
  Block &body = func.getBody().front();
  DenseMap<Operation *, unsigned> positions;
  for (auto [i, op] : llvm::enumerate(body))
    positions[&op] = i;
  DataLayout layout = DataLayout::closest(func);
  func.walk([&](memref::AllocOp alloc) {
    MemRefType type = alloc.getType();
    std::optional<unsigned> last;
    // One place per allocation: not for one made in each iteration of a parallel loop
    // (only loops whose iterations run one after the other may reuse it).
    bool sequential = true;
    for (Operation *parent = alloc->getParentOp(); parent != func; parent = parent->getParentOp())
      sequential &= isa<scf::ForOp, scf::IfOp, scf::WhileOp>(parent);
    bool placeable =
        sequential && type.hasStaticShape() && type.getLayout().isIdentity() &&
        alloc.getAlignment().value_or(1) <= kArenaAlignment &&
        (type.getElementType().isIntOrIndexOrFloat() || isa<ComplexType>(type.getElementType()));
    if (placeable)
      last = lastUse(alloc, body, positions);
    if (!last) {
      ++plan.unplanned;
      return;
    }
    Buffer buffer;
    buffer.alloc = alloc;
    buffer.bytes =
        alignTo(type.getNumElements() * int64_t(layout.getTypeSize(type.getElementType())));
    buffer.first = positionIn(body, alloc, positions);
    buffer.last = *last;
    plan.bufferBytes += buffer.bytes;
    plan.buffers.push_back(buffer);
  });
  placeBuffers(plan);

  MLIRContext *ctx = func.getContext();
  auto arenaType = MemRefType::get({plan.arenaBytes}, IntegerType::get(ctx, 8));
  if (failed(func.insertArgument(
          func.getNumArguments(), arenaType,
          DictionaryAttr::get(ctx, {NamedAttribute(StringAttr::get(ctx, attr::kKind),
                                                   StringAttr::get(ctx, "arena"))}),
          func.getLoc())))
    llvm_unreachable("a function without a body has no temporaries");
  Value arena = func.getArguments().back();
  for (Buffer &buffer : plan.buffers) {
    OpBuilder b(buffer.alloc);
    Location loc = buffer.alloc.getLoc();
    Value offset = arith::ConstantIndexOp::create(b, loc, buffer.offset);
    auto view = memref::ViewOp::create(b, loc, buffer.alloc.getType(), arena, offset, ValueRange());
    buffer.alloc.replaceAllUsesWith(view.getResult());
    buffer.alloc.erase();
  }
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
               b.getNamedAttr(abi::kUnplannedKey, b.getI64IntegerAttr(plan.unplanned))})));
    }
    NamedAttrList updated(abiAttr);
    updated.set(abi::kMemoryKey, b.getDictionaryAttr(memory));
    module->setAttr(abi::kAbi, updated.getDictionary(module.getContext()));
  }
};

} // namespace
