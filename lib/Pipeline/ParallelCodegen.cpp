//===- ParallelCodegen.cpp - One function's code on several cores ---------===//

#include "fuse/ParallelCodegen.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DepthFirstIterator.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/SmallVectorMemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/CodeExtractor.h"

#include <algorithm>
#include <functional>

#define DEBUG_TYPE "fuse-parallel-codegen"

using namespace llvm;

namespace {

/// Whether `type` holds a pointer other than as itself (a struct or vector
/// of pointers): such an argument hides where its pointers come from.
bool hidesPointer(Type *type) {
  if (type->isPointerTy())
    return false;
  if (auto *s = dyn_cast<StructType>(type))
    return llvm::any_of(s->elements(), [](Type *t) {
      return t->isPointerTy() || hidesPointer(t);
    });
  if (auto *a = dyn_cast<ArrayType>(type))
    return a->getElementType()->isPointerTy() ||
           hidesPointer(a->getElementType());
  if (auto *v = dyn_cast<VectorType>(type))
    return v->getElementType()->isPointerTy();
  return false;
}

/// Marks the pointer parameters of `outlined` noalias when its one call
/// passes each a distinct identified object: a noalias argument of the
/// caller or an alloca. Then any memory the segment reaches through one
/// parameter it reached, in the caller, through that argument alone, as
/// the caller's own noalias promised; the vectorizer and the scheduler
/// keep the facts they had. A parameter from an argument that is not
/// noalias (a buffer of a shared workspace slot, fuse-workspace) or from
/// an object another parameter is also from is not marked, the others
/// still are: the caller's arguments are not based on one another. A
/// pointer of any other origin (loaded from memory) marks none.
void markNoAlias(Function &outlined, CallInst &call) {
  SmallVector<const Value *> objectOf(call.arg_size(), nullptr);
  llvm::DenseMap<const Value *, unsigned> uses;
  for (Use &operand : call.args()) {
    Type *type = operand->getType();
    if (hidesPointer(type))
      return;
    if (!type->isPointerTy())
      continue;
    const Value *object = getUnderlyingObject(operand.get());
    if (!isa<AllocaInst, Argument>(object)) {
      LLVM_DEBUG(dbgs() << "fuse-parallel-codegen: " << outlined.getName()
                        << ": no noalias, operand " << *operand.get() << "\n");
      return;
    }
    objectOf[operand.getOperandNo()] = object;
    ++uses[object];
  }
  for (Argument &param : outlined.args()) {
    if (!param.getType()->isPointerTy())
      continue;
    const Value *object = objectOf[param.getArgNo()];
    auto *arg = dyn_cast<Argument>(object);
    bool identified = !arg || arg->hasNoAliasAttr();
    if (identified && uses.lookup(object) == 1)
      param.addAttr(Attribute::NoAlias);
    else
      LLVM_DEBUG(dbgs() << "fuse-parallel-codegen: " << outlined.getName()
                        << ": no noalias on parameter " << param.getArgNo()
                        << "\n");
  }
}

/// Whether a value the region defines and the rest of the function uses
/// could point into the region's stack frame, which is gone once the
/// outlined function returns: a pointer whose origin is an alloca (the
/// region's own, or one CodeExtractor sinks into it) or unknown, or an
/// aggregate holding pointers.
bool leaksStack(ArrayRef<BasicBlock *> region) {
  SmallPtrSet<const BasicBlock *, 32> blocks(region.begin(), region.end());
  for (BasicBlock *block : region)
    for (Instruction &inst : *block) {
      if (llvm::all_of(inst.users(), [&](User *user) {
            return blocks.contains(cast<Instruction>(user)->getParent());
          }))
        continue;
      Type *type = inst.getType();
      if (hidesPointer(type))
        return true;
      if (!type->isPointerTy())
        continue;
      const Value *object = getUnderlyingObject(&inst);
      if (!isa<Argument, GlobalValue>(object)) {
        LLVM_DEBUG(dbgs() << "fuse-parallel-codegen: " << inst
                          << " leaves the segment\n");
        return true;
      }
    }
  return false;
}

/// Whether `inst` computes, without memory, from constants, arguments and
/// other such instructions only: cheap to compute again.
bool isRecomputable(const Instruction *inst, unsigned depth = 0) {
  if (depth > 8 || inst->mayReadOrWriteMemory() || inst->mayHaveSideEffects() ||
      isa<PHINode, AllocaInst, CallBase>(inst) || inst->isTerminator())
    return false;
  return llvm::all_of(inst->operands(), [&](const Value *operand) {
    auto *def = dyn_cast<Instruction>(operand);
    return !def || isRecomputable(def, depth + 1);
  });
}

/// Gets the region ready to be outlined: values it uses from outside that
/// are recomputable are computed again at its start (a splat of a constant
/// stays a constant to the outlined function's optimizer, not a
/// parameter); scalars and pointers are passed as parameters, in registers
/// (pointers may then be noalias); anything else (a vector carried across
/// the steps, an aggregate) goes through memory, in the one structure
/// CodeExtractor passes by pointer, never as a vector or aggregate
/// argument, whose calling convention LLVM lowers poorly (an array of
/// <10 x float> came out wrong).
void prepareInputs(ArrayRef<BasicBlock *> region, CodeExtractor &extractor) {
  SmallPtrSet<const BasicBlock *, 32> blocks(region.begin(), region.end());
  auto outside = [&](Value *value) {
    auto *def = dyn_cast<Instruction>(value);
    return def && !blocks.contains(def->getParent());
  };
  // Clones of the recomputed values, in the region's first block, operands
  // before users.
  DenseMap<Instruction *, Instruction *> clones;
  Instruction *insertAt = &*region.front()->getFirstInsertionPt();
  std::function<Instruction *(Instruction *)> recompute =
      [&](Instruction *def) -> Instruction * {
    if (Instruction *clone = clones.lookup(def))
      return clone;
    Instruction *clone = def->clone();
    for (Use &operand : clone->operands())
      if (outside(operand.get()))
        operand.set(recompute(cast<Instruction>(operand.get())));
    clone->insertBefore(insertAt->getIterator());
    clone->setName(def->getName());
    clones[def] = clone;
    return clone;
  };
  auto passInRegister = [&](Value *value) {
    Type *type = value->getType();
    if (type->isPointerTy() || type->isIntegerTy() || type->isFloatingPointTy())
      extractor.excludeArgFromAggregate(value);
  };
  for (BasicBlock *block : region)
    for (Instruction &inst : *block) {
      if (clones.count(&inst))
        continue;
      for (Use &operand : inst.operands()) {
        if (isa<Argument>(operand.get())) {
          passInRegister(operand.get());
          continue;
        }
        if (!outside(operand.get()))
          continue;
        auto *def = cast<Instruction>(operand.get());
        if (isRecomputable(def) && !def->getType()->isPointerTy())
          operand.set(recompute(def));
        else
          passInRegister(def);
      }
    }
  // The recomputed values' own inputs.
  for (auto [def, clone] : clones)
    for (Value *operand : clone->operands())
      if (isa<Argument>(operand))
        passInRegister(operand);
}

/// The functions `root` references directly (through constant
/// expressions too).
void collectCallees(Function &root, SetVector<Function *> &out) {
  SmallVector<const Value *> work;
  SmallPtrSet<const Value *, 32> seen;
  for (Instruction &inst : instructions(root))
    for (Value *operand : inst.operands())
      work.push_back(operand);
  while (!work.empty()) {
    const Value *value = work.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (auto *f = dyn_cast<Function>(value)) {
      out.insert(const_cast<Function *>(f));
    } else if (auto *c = dyn_cast<ConstantExpr>(value)) {
      for (const Value *operand : c->operands())
        work.push_back(operand);
    }
  }
}

/// The code generation work of `block`: its instructions and those of the
/// internal functions it references (the OpenMP regions it forks, which
/// OpenMPIRBuilder outlined at translation and which go with it).
uint64_t weightOf(const BasicBlock &block) {
  uint64_t weight = block.size();
  for (const Instruction &inst : block)
    if (isa<CallBase>(inst))
      for (const Value *operand : inst.operands())
        if (auto *callee = dyn_cast<Function>(operand);
            callee && callee->hasLocalLinkage() && !callee->isDeclaration())
          weight += callee->getInstructionCount();
  return weight;
}

} // namespace

unsigned fuse::codegenPartsFor(const Function &function) {
  uint64_t weight = 0;
  for (const BasicBlock &block : function)
    weight += weightOf(block);
  return std::clamp<uint64_t>(weight / kCodegenPartInstructions, 1,
                              kMaxCodegenParts);
}

SmallVector<Function *> fuse::outlineSegments(Function &function,
                                              unsigned parts) {
  if (parts < 2 || function.isDeclaration())
    return {};
  BasicBlock *exit = nullptr;
  for (BasicBlock &block : function) {
    if (isa<ReturnInst>(block.getTerminator())) {
      if (exit)
        return {};
      exit = &block;
    } else if (!isa<BranchInst, SwitchInst>(block.getTerminator())) {
      return {};
    }
  }
  if (!exit)
    return {};

  DominatorTree tree(function);
  LoopInfo loops(tree);
  // The scope whose body is cut: the function or, while one loop holds
  // most of it, that loop (a K-step function is one loop over the step).
  // `end` ends the body: the return block or the loop's latch; it stays in
  // the caller, as does the body's head up to the first cut.
  auto loopWeight = [](Loop &loop) {
    uint64_t weight = 0;
    for (BasicBlock *block : loop.blocks())
      weight += weightOf(*block);
    return weight;
  };
  uint64_t size = 0;
  for (BasicBlock &block : function)
    size += weightOf(block);
  Loop *scope = nullptr;
  BasicBlock *end = exit;
  BasicBlock *head = &function.getEntryBlock();
  while (true) {
    Loop *heaviest = nullptr;
    uint64_t heaviestWeight = 0;
    for (Loop *loop : scope ? scope->getSubLoops() : loops.getTopLevelLoops())
      if (uint64_t weight = loopWeight(*loop); weight > heaviestWeight) {
        heaviest = loop;
        heaviestWeight = weight;
      }
    if (!heaviest || heaviestWeight * 4 < size * 3 || !heaviest->getLoopLatch())
      break;
    scope = heaviest;
    end = heaviest->getLoopLatch();
    head = heaviest->getHeader();
  }
  auto inScope = [&](BasicBlock *block) {
    return !scope || scope->contains(block);
  };

  // The blocks every pass through the body takes: the dominators of `end`
  // within it. Those in no deeper loop, without phis, are where segments
  // may start.
  SmallVector<BasicBlock *> cuts;
  SmallVector<BasicBlock *> chain;
  for (DomTreeNode *node = tree.getNode(end)->getIDom();
       node && inScope(node->getBlock()); node = node->getIDom())
    chain.push_back(node->getBlock());
  for (BasicBlock *block : llvm::reverse(chain))
    if (block != head && loops.getLoopFor(block) == scope &&
        !isa<PHINode>(block->front()))
      cuts.push_back(block);
  if (cuts.empty())
    return {};

  // Each block belongs to the segment of the nearest cut dominating it
  // (0: the entry's); its weight is its instruction count.
  DenseMap<BasicBlock *, unsigned> cutIndex;
  for (auto [i, block] : llvm::enumerate(cuts))
    cutIndex[block] = i + 1;
  DenseMap<BasicBlock *, unsigned> segmentOf;
  SmallVector<uint64_t> weights(cuts.size() + 1, 0);
  for (DomTreeNode *node : depth_first(tree.getRootNode())) {
    BasicBlock *block = node->getBlock();
    unsigned segment = cutIndex.lookup(block);
    if (!segment && node->getIDom())
      segment = segmentOf[node->getIDom()->getBlock()];
    segmentOf[block] = segment;
    if (block != end && inScope(block))
      weights[segment] += weightOf(*block);
  }
  uint64_t total = 0;
  for (uint64_t w : weights)
    total += w;

  // Segment starts nearest to k/parts of the instructions, k = 1..parts-1.
  SmallVector<unsigned> starts;
  uint64_t before = weights[0];
  unsigned next = 1;
  for (unsigned k = 1; k < parts && next <= cuts.size(); ++k) {
    uint64_t target = total * k / parts;
    // Advance while the next start is at least as near to the target.
    unsigned best = next;
    uint64_t prefix = before;
    while (best < cuts.size()) {
      uint64_t after = prefix + weights[best];
      uint64_t here = prefix > target ? prefix - target : target - prefix;
      uint64_t there = after > target ? after - target : target - after;
      if (there > here)
        break;
      prefix = after;
      ++best;
    }
    starts.push_back(best);
    before = prefix + weights[best];
    next = best + 1;
  }

  // Extracted last first: each extraction leaves the blocks of the
  // segments before it as they were.
  SmallVector<SmallVector<BasicBlock *>> regions(starts.size());
  for (BasicBlock &block : function) {
    if (&block == end || !inScope(&block))
      continue;
    unsigned segment = segmentOf.lookup(&block);
    auto it = llvm::upper_bound(starts, segment);
    if (it == starts.begin())
      continue;
    regions[std::distance(starts.begin(), it) - 1].push_back(&block);
  }
  for (auto [region, start] : llvm::zip(regions, starts)) {
    // The segment's first block leads the list, as CodeExtractor wants.
    auto first = llvm::find(region, cuts[start - 1]);
    std::rotate(region.begin(), first, first + 1);
  }
  LLVM_DEBUG({
    dbgs() << "fuse-parallel-codegen: " << function.getName() << ": "
           << (scope ? "loop at depth " + Twine(scope->getLoopDepth()).str()
                     : std::string("function body"))
           << ", " << cuts.size() << " cut points, " << total
           << " instructions, segments start at";
    for (unsigned s : starts)
      dbgs() << " " << s;
    dbgs() << "\n";
  });

  SmallVector<Function *> outlined(regions.size(), nullptr);
  for (unsigned i = regions.size(); i-- > 0;) {
    DominatorTree current(function);
    CodeExtractor extractor(regions[i], &current, /*AggregateArgs=*/true,
                            nullptr, nullptr, nullptr,
                            /*AllowVarArgs=*/false, /*AllowAlloca=*/true);
    if (!extractor.isEligible() || leaksStack(regions[i])) {
      LLVM_DEBUG(dbgs() << "fuse-parallel-codegen: segment " << i + 1
                        << " cannot be extracted\n");
      continue;
    }
    prepareInputs(regions[i], extractor);
    CodeExtractorAnalysisCache cache(function);
    Function *part = extractor.extractCodeRegion(cache);
    if (!part)
      continue;
    part->setName(function.getName() + ".part" + Twine(i + 1));
    part->setLinkage(GlobalValue::ExternalLinkage);
    part->addFnAttr(Attribute::NoInline);
    markNoAlias(*part, *cast<CallInst>(part->user_back()));
    outlined[i] = part;
  }
  llvm::erase(outlined, nullptr);
  return outlined;
}

Expected<SmallVector<std::unique_ptr<MemoryBuffer>>>
fuse::splitOutFunctions(Module &module, ArrayRef<Function *> roots) {
  // Each root with the internal functions only it uses (its OpenMP
  // regions). An internal function used from more than one part stays and
  // becomes visible to the others.
  SmallVector<SetVector<Function *>> groups(roots.size());
  DenseMap<Function *, unsigned> groupOf;
  for (auto [i, root] : llvm::enumerate(roots)) {
    groups[i].insert(root);
    groupOf[root] = i;
  }
  SmallVector<SetVector<Function *>> callees(roots.size());
  for (auto [i, group] : llvm::enumerate(groups)) {
    // The group grows as its members' helpers join it.
    for (size_t m = 0; m < group.size(); ++m)
      collectCallees(*group[m], callees[i]);
    for (size_t c = 0; c < callees[i].size(); ++c) {
      Function *callee = callees[i][c];
      if (callee->isDeclaration() || !callee->hasLocalLinkage() ||
          groupOf.count(callee))
        continue;
      bool onlyHere = llvm::all_of(callee->users(), [&](User *user) {
        auto *inst = dyn_cast<Instruction>(user);
        return inst && group.contains(inst->getFunction());
      });
      if (onlyHere) {
        group.insert(callee);
        groupOf[callee] = i;
        collectCallees(*callee, callees[i]);
      }
    }
  }
  // What a part uses and the module keeps is declared in the part, so it
  // must be visible to it; the rest keeps its linkage.
  for (auto [i, group] : llvm::enumerate(groups))
    for (Function *callee : callees[i])
      if (!group.contains(callee) && !callee->isDeclaration() &&
          callee->hasLocalLinkage())
        callee->setLinkage(GlobalValue::ExternalLinkage);
  for (GlobalVariable &g : module.globals())
    if (g.hasLocalLinkage() && !g.isConstant())
      g.setLinkage(GlobalValue::ExternalLinkage);

  SmallVector<std::unique_ptr<MemoryBuffer>> parts;
  for (const SetVector<Function *> &group : groups) {
    ValueToValueMapTy map;
    std::unique_ptr<Module> part =
        CloneModule(module, map, [&](const GlobalValue *value) {
          if (auto *f = dyn_cast<Function>(value))
            return group.contains(const_cast<Function *>(f));
          // Constants (OpenMP's source locations) are copied to each part.
          auto *g = dyn_cast<GlobalVariable>(value);
          return g && g->hasLocalLinkage() && g->isConstant();
        });
    SmallVector<char, 0> bytes;
    raw_svector_ostream os(bytes);
    WriteBitcodeToFile(*part, os);
    parts.push_back(std::make_unique<SmallVectorMemoryBuffer>(
        std::move(bytes), part->getName(),
        /*RequiresNullTerminator=*/false));
  }
  // The moved definitions become declarations; their helpers go.
  for (const SetVector<Function *> &group : groups)
    for (Function *f : group)
      f->deleteBody();
  for (const SetVector<Function *> &group : groups)
    for (Function *f : group)
      if (f->use_empty() && !llvm::is_contained(roots, f))
        f->eraseFromParent();
  return parts;
}

Expected<std::unique_ptr<Module>> fuse::readPart(const MemoryBuffer &bitcode,
                                                 LLVMContext &context) {
  return parseBitcodeFile(bitcode.getMemBufferRef(), context);
}
