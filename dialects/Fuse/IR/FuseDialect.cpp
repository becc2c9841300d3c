//===- FuseDialect.cpp - The fuse dialect ---------------------------------===//

#include "Fuse/IR/FuseDialect.h"
#include "Fuse/IR/FuseOps.h"
#include "fuse/LrSchedule.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"

#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace fuse;

#include "Fuse/FuseOpsDialect.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "Fuse/FuseAttrs.cpp.inc"

void FuseDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "Fuse/FuseOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Fuse/FuseAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// #fuse.init
//===----------------------------------------------------------------------===//

StringRef InitializerAttr::scaleName(InitKind kind) {
  switch (kind) {
  case InitKind::constant:
    return "value";
  case InitKind::uniform:
    return "limit";
  case InitKind::normal:
    return "stddev";
  default:
    return "";
  }
}

/// Keras' RandomUniform and RandomNormal defaults.
static double defaultScale(InitKind kind) {
  return kind == InitKind::uniform || kind == InitKind::normal ? 0.05 : 0.0;
}

Attribute InitializerAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<InitKind> kind = symbolizeInitKind(keyword);
  if (!kind) {
    parser.emitError(loc, "unknown initializer '")
        << keyword
        << "', expected zeros, ones, constant, uniform, normal, "
           "glorot_uniform, glorot_normal, he_uniform or he_normal";
    return {};
  }
  double scale = defaultScale(*kind);
  StringRef name = scaleName(*kind);
  if (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key))
      return {};
    if (key != name) {
      if (name.empty())
        parser.emitError(keyLoc, "'") << keyword << "' takes no parameters";
      else
        parser.emitError(keyLoc, "expected '") << name << "'";
      return {};
    }
    if (parser.parseEqual() || parser.parseFloat(scale))
      return {};
  } else if (*kind == InitKind::constant) {
    parser.emitError(parser.getCurrentLocation(),
                     "'constant' needs 'value = ...'");
    return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<InitializerAttr>(loc, parser.getContext(), *kind,
                                            APFloat(scale));
}

void InitializerAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyInitKind(getKind());
  StringRef name = scaleName(getKind());
  if (!name.empty())
    printer << ", " << name << " = " << getScale();
  printer << ">";
}

LogicalResult
InitializerAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        InitKind kind, APFloat scale) {
  double value = scale.convertToDouble();
  if (!std::isfinite(value))
    return emitError() << "initializer parameter must be finite";
  if ((kind == InitKind::uniform || kind == InitKind::normal) && value <= 0)
    return emitError() << "'" << scaleName(kind)
                       << "' of an initializer must be positive";
  if (scaleName(kind).empty() && value != 0)
    return emitError() << "'" << stringifyInitKind(kind)
                       << "' takes no parameters";
  return success();
}

//===----------------------------------------------------------------------===//
// #fuse.lr_schedule
//===----------------------------------------------------------------------===//

static bool takesGamma(ScheduleKind kind) {
  return kind == ScheduleKind::step || kind == ScheduleKind::exponential;
}
static bool takesMin(ScheduleKind kind) {
  return kind == ScheduleKind::cosine || kind == ScheduleKind::linear;
}

Attribute LrScheduleAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<ScheduleKind> kind = symbolizeScheduleKind(keyword);
  if (!kind) {
    parser.emitError(loc, "unknown learning-rate schedule '")
        << keyword
        << "', expected constant, step, exponential, cosine or "
           "linear";
    return {};
  }
  int64_t warmup = 0, decaySteps = 0;
  double gamma = takesGamma(*kind) ? kDefaultLrGamma : 0.0, min = 0.0;
  llvm::SmallSet<StringRef, 4> seen;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key))
      return {};
    bool known = key == "warmup" || key == "decay_steps" ||
                 (key == "gamma" && takesGamma(*kind)) ||
                 (key == "min" && takesMin(*kind));
    if (!known) {
      parser.emitError(keyLoc, "'")
          << keyword << "' takes no parameter '" << key << "'";
      return {};
    }
    if (!seen.insert(key).second) {
      parser.emitError(keyLoc, "'") << key << "' appears more than once";
      return {};
    }
    if (parser.parseEqual())
      return {};
    if (key == "warmup"        ? parser.parseInteger(warmup)
        : key == "decay_steps" ? parser.parseInteger(decaySteps)
        : key == "gamma"       ? parser.parseFloat(gamma)
                               : parser.parseFloat(min))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<LrScheduleAttr>(loc, parser.getContext(), *kind,
                                           warmup, decaySteps, APFloat(gamma),
                                           APFloat(min));
}

void LrScheduleAttr::print(AsmPrinter &printer) const {
  ScheduleKind kind = getKind();
  printer << "<" << stringifyScheduleKind(kind);
  if (getWarmup() != 0)
    printer << ", warmup = " << getWarmup();
  if (kind != ScheduleKind::constant)
    printer << ", decay_steps = " << getDecaySteps();
  if (takesGamma(kind))
    printer << ", gamma = " << getGamma();
  if (takesMin(kind) && !getMin().isZero())
    printer << ", min = " << getMin();
  printer << ">";
}

LogicalResult
LrScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       ScheduleKind kind, int64_t warmup, int64_t decaySteps,
                       APFloat gamma, APFloat min) {
  // The library's checks (fuse/LrSchedule.h), so that --lr-schedule and the
  // attribute say the same.
  LrSchedule schedule;
  schedule.kind = static_cast<LrScheduleKind>(kind);
  schedule.warmup = warmup;
  schedule.decaySteps = decaySteps;
  if (takesGamma(kind) || !gamma.isZero())
    schedule.gamma = gamma.convertToDouble();
  if (takesMin(kind) || !min.isZero())
    schedule.min = min.convertToDouble();
  std::string error = lrScheduleError(schedule);
  if (!error.empty())
    return emitError() << "invalid #fuse.lr_schedule: " << error;
  return success();
}

//===----------------------------------------------------------------------===//
// #fuse.lowering_config
//===----------------------------------------------------------------------===//

LoweringConfigAttr LoweringConfigAttr::lookup(Operation *op) {
  return op->getAttrOfType<LoweringConfigAttr>(kAttrName);
}

SmallVector<ArrayRef<int64_t>> LoweringConfigAttr::getRegisterTiles() const {
  SmallVector<ArrayRef<int64_t>> tiles;
  ArrayRef<int64_t> registers = getRegisters();
  int64_t loops = getNumLoops();
  if (loops == 0)
    return tiles;
  for (int64_t begin = 0; begin < int64_t(registers.size()); begin += loops)
    tiles.push_back(registers.slice(begin, loops));
  return tiles;
}

/// `name = [a, b, ...]`.
static ParseResult parseLevel(AsmParser &parser, StringRef name,
                              SmallVectorImpl<int64_t> &sizes) {
  return failure(
      parser.parseKeyword(name) || parser.parseEqual() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return parser.parseInteger(sizes.emplace_back());
      }));
}

Attribute LoweringConfigAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseLess() || parser.parseKeyword("strategy") ||
      parser.parseEqual() || parser.parseKeyword(&keyword))
    return {};
  std::optional<LoweringStrategy> strategy = symbolizeLoweringStrategy(keyword);
  if (!strategy) {
    parser.emitError(loc, "unknown lowering strategy '") << keyword << "'";
    return {};
  }
  SmallVector<int64_t> distribution, cache, registers, vector, interchange;
  if (parser.parseComma() || parseLevel(parser, "distribution", distribution) ||
      parser.parseComma() || parseLevel(parser, "cache", cache) ||
      parser.parseComma() || parseLevel(parser, "registers", registers) ||
      parser.parseComma() || parseLevel(parser, "vector", vector))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      parseLevel(parser, "interchange", interchange))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<LoweringConfigAttr>(loc, parser.getContext(),
                                               *strategy, distribution, cache,
                                               registers, vector, interchange);
}

void LoweringConfigAttr::print(AsmPrinter &printer) const {
  auto level = [&](StringRef name, ArrayRef<int64_t> sizes) {
    printer << ", " << name << " = [";
    llvm::interleaveComma(sizes, printer);
    printer << "]";
  };
  printer << "<strategy = " << stringifyLoweringStrategy(getStrategy());
  level("distribution", getDistribution());
  level("cache", getCache());
  level("registers", getRegisters());
  level("vector", getVector());
  if (!getInterchange().empty())
    level("interchange", getInterchange());
  printer << ">";
}

LogicalResult LoweringConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, LoweringStrategy strategy,
    ArrayRef<int64_t> distribution, ArrayRef<int64_t> cache,
    ArrayRef<int64_t> registers, ArrayRef<int64_t> vector,
    ArrayRef<int64_t> interchange) {
  size_t loops = vector.size();
  for (ArrayRef<int64_t> level : {distribution, cache, registers, vector})
    if (llvm::any_of(level, [](int64_t size) { return size < 0; }))
      return emitError() << "lowering config tile sizes must be non-negative";
  if (distribution.size() != loops || cache.size() != loops)
    return emitError() << "lowering config levels 'distribution', 'cache' "
                          "and 'vector' must have one size per loop";
  if (loops == 0 ? !registers.empty()
                 : registers.empty() || registers.size() % loops != 0)
    return emitError() << "lowering config level 'registers' must hold one "
                          "or more tiles of one size per loop";
  if ((strategy == LoweringStrategy::register_tile) != (loops == 0))
    return emitError() << "a lowering config has no levels exactly when its "
                          "strategy is register_tile";
  if (!interchange.empty()) {
    SmallVector<int64_t> sorted(interchange);
    llvm::sort(sorted);
    for (auto [index, value] : llvm::enumerate(sorted))
      if (value != int64_t(index) || interchange.size() != loops)
        return emitError() << "lowering config 'interchange' must be a "
                              "permutation of the loops";
  }
  return success();
}

LogicalResult FuseDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == LoweringConfigAttr::kAttrName) {
    auto config = dyn_cast<LoweringConfigAttr>(attr.getValue());
    if (!config)
      return op->emitOpError()
             << "'" << name << "' must be a #fuse.lowering_config";
    // One size per loop of the op (a register_tile has no levels).
    auto tiled = dyn_cast<TilingInterface>(op);
    if (tiled && config.getNumLoops() != 0 &&
        config.getNumLoops() != int64_t(tiled.getLoopIteratorTypes().size()))
      return op->emitOpError()
             << "has a lowering config sized for " << config.getNumLoops()
             << " loops, not its " << tiled.getLoopIteratorTypes().size();
  }
  if (name == kImageLoopAttrName && (!isa<UnitAttr>(attr.getValue()) ||
                                     op->getName().getStringRef() != "scf.for"))
    return op->emitOpError()
           << "'" << name << "' must be a unit attribute on an scf.for";
  if (name == kOptimizerUpdateAttrName &&
      (!isa<UnitAttr>(attr.getValue()) ||
       op->getName().getStringRef() != "linalg.generic"))
    return op->emitOpError()
           << "'" << name << "' must be a unit attribute on a linalg.generic";
  if (name == kMaterializeAttrName && !isa<UnitAttr>(attr.getValue()))
    return op->emitOpError() << "'" << name << "' must be a unit attribute";
  return success();
}

Operation *FuseDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

// Argument and result attributes stay valid through lowering: they accept
// memrefs as well as tensors, and are not checked once values are no longer
// shaped (LLVM pointers).

/// `fuse.stacked` on a value of `type`: a unit attribute on a ranked
/// tensor (or buffer) whose dim 0 is dynamic.
static LogicalResult verifyStacked(Operation *op, Type type,
                                   NamedAttribute attr,
                                   const llvm::Twine &what) {
  auto tensor = dyn_cast<ShapedType>(type);
  if (!isa<UnitAttr>(attr.getValue()) || !tensor || !tensor.hasRank() ||
      tensor.getRank() == 0 || !tensor.isDynamicDim(0))
    return op->emitError("'")
           << kStackedAttrName << "' must be a unit attribute on " << what
           << " whose dim 0 is dynamic, got " << type;
  return success();
}

LogicalResult FuseDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitError("fuse argument attributes belong on functions");
  Type type = func.getArgumentTypes()[argIndex];
  StringRef name = attr.getName().getValue();
  bool lowered = !isa<ShapedType>(type);
  if (name == kStackedAttrName)
    return lowered ? success() : verifyStacked(op, type, attr, "an argument");
  if (name == kInitAttrName) {
    auto shaped = dyn_cast<ShapedType>(type);
    if (!isa<InitializerAttr>(attr.getValue()) ||
        (!lowered && !isa<FloatType>(shaped.getElementType())))
      return op->emitError("'")
             << kInitAttrName
             << "' must be a #fuse.init attribute on a float tensor argument, "
                "got "
             << attr.getValue() << " on " << type;
    return success();
  }
  if (name == abi::kWorkspaceSlotAttrName) {
    // fuse-workspace's: a buffer sharing its bytes with its slot's others.
    auto slot = dyn_cast<IntegerAttr>(attr.getValue());
    if (!slot || slot.getInt() < 0 || isa<TensorType>(type))
      return op->emitError("'")
             << abi::kWorkspaceSlotAttrName
             << "' must be a slot number (a non-negative integer) on a "
                "buffer argument, got "
             << attr.getValue() << " on " << type;
    return success();
  }
  if (name == kClassLabelsAttrName) {
    auto shaped = dyn_cast<ShapedType>(type);
    auto classes = dyn_cast<IntegerAttr>(attr.getValue());
    if (!classes || classes.getInt() <= 0 ||
        (!lowered && !isa<IntegerType>(shaped.getElementType())))
      return op->emitError("'")
             << kClassLabelsAttrName
             << "' must be a positive integer (the class count) on an "
                "integer tensor argument, got "
             << attr.getValue() << " on " << type;
    return success();
  }
  if (name == kPerStepAttrName) {
    auto shaped = dyn_cast<ShapedType>(type);
    if (!isa<UnitAttr>(attr.getValue()) || (!lowered && !shaped.hasRank()))
      return op->emitError("'")
             << kPerStepAttrName
             << "' must be a unit attribute on a ranked tensor argument";
    return success();
  }
  if (name == kStepCounterAttrName) {
    auto tensor = dyn_cast<ShapedType>(type);
    if (!isa<UnitAttr>(attr.getValue()) ||
        (!lowered && (!tensor.hasRank() || tensor.getRank() != 0 ||
                      !tensor.getElementType().isInteger(64))))
      return op->emitError("'")
             << kStepCounterAttrName
             << "' must be a unit attribute on a tensor<i64> argument, got "
             << type;
    for (unsigned other = 0; other < argIndex; ++other)
      if (func.getArgAttr(other, kStepCounterAttrName))
        return op->emitError("arguments #")
               << other << " and #" << argIndex << " are both '"
               << kStepCounterAttrName << "'";
    if (func.getArgAttr(argIndex, kPerStepAttrName))
      return op->emitError("argument #")
             << argIndex << " cannot be both '" << kStepCounterAttrName
             << "' and '" << kPerStepAttrName << "'";
    return success();
  }
  if (name == kSplitHalvesAttrName || name == kLowHalfOfAttrName) {
    // A split weight's pair: its top halves (bf16) name the argument of its
    // low halves (i16, the same shape), which names them back.
    bool high = name == kSplitHalvesAttrName;
    StringRef back = high ? kLowHalfOfAttrName : kSplitHalvesAttrName;
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    ArrayRef<Type> args = func.getArgumentTypes();
    auto fail = [&]() {
      return op->emitError("'")
             << name << "' on argument #" << argIndex << " ("
             << (high ? "bf16 top" : "i16 low")
             << " halves) must be the index of the argument holding the "
             << (high ? "low" : "top") << " halves of the same weight ("
             << (high ? "an i16" : "a bf16")
             << " tensor of the same shape with '" << back << "' = " << argIndex
             << "), got " << attr.getValue();
    };
    if (!index || index.getInt() < 0 ||
        index.getInt() >= static_cast<int64_t>(args.size()) ||
        index.getInt() == argIndex)
      return fail();
    auto other = func.getArgAttrOfType<IntegerAttr>(index.getInt(), back);
    if (!other || other.getInt() != argIndex)
      return fail();
    if (lowered)
      return success();
    auto mine = dyn_cast<RankedTensorType>(type);
    auto theirs = dyn_cast<RankedTensorType>(args[index.getInt()]);
    Type element = mine ? mine.getElementType() : Type();
    if (!mine || !theirs || mine.getShape() != theirs.getShape() ||
        !(high ? element.isBF16() : element.isInteger(16)))
      return fail();
    return success();
  }
  return op->emitError("unknown fuse argument attribute '") << name << "'";
}

LogicalResult FuseDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  if (attr.getName() == kStackedAttrName) {
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!func)
      return op->emitError("fuse result attributes belong on functions");
    Type type = func.getResultTypes()[resultIndex];
    return isa<ShapedType>(type) ? verifyStacked(op, type, attr, "a result")
                                 : success();
  }
  if (attr.getName() != kInPlaceAttrName)
    return op->emitError("unknown fuse result attribute '")
           << attr.getName().getValue() << "'";
  auto func = dyn_cast<FunctionOpInterface>(op);
  auto index = dyn_cast<IntegerAttr>(attr.getValue());
  if (!func || !index)
    return op->emitError("'")
           << kInPlaceAttrName
           << "' must be an integer (an argument index) on a function result";
  int64_t arg = index.getInt();
  ArrayRef<Type> args = func.getArgumentTypes();
  if (arg < 0 || arg >= static_cast<int64_t>(args.size()))
    return op->emitError("result #")
           << resultIndex << " is in place of argument #" << arg
           << ", but the function has " << args.size() << " arguments";
  Type result = func.getResultTypes()[resultIndex];
  if (args[arg] != result)
    return op->emitError("result #")
           << resultIndex << " (" << result << ") is in place of argument #"
           << arg << " of another type (" << args[arg] << ")";
  for (unsigned other = 0; other < resultIndex; ++other)
    if (auto earlier =
            func.getResultAttrOfType<IntegerAttr>(other, kInPlaceAttrName);
        earlier && earlier.getInt() == arg)
      return op->emitError("results #")
             << other << " and #" << resultIndex
             << " are both in place of argument #" << arg;
  return success();
}
