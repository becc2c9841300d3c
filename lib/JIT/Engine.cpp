//===- Engine.cpp - Fuse's embeddable JIT ---------------------------------===//
//
// The public Engine and Function classes. Loading is in Loader.cpp,
// compiling a call's specialization in Specialization.cpp, calls in
// Invoke.cpp.
//
//===----------------------------------------------------------------------===//

#include "EngineImpl.h"
#include "Threads.h"
#include "fuse/Codegen.h"
#include "fuse/Pipeline.h"

using namespace fuse;

//===----------------------------------------------------------------------===//
// Function
//===----------------------------------------------------------------------===//

Function::Function(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Function::~Function() = default;

llvm::StringRef Function::name() const { return impl_->name; }
size_t Function::numArguments() const { return impl_->argTypes.size(); }
size_t Function::numResults() const { return impl_->results.size(); }
llvm::ArrayRef<std::string> Function::argumentNames() const {
  return impl_->argNames;
}
llvm::ArrayRef<ArgumentInfo> Function::arguments() const {
  return impl_->arguments;
}
llvm::ArrayRef<ResultInfo> Function::results() const { return impl_->results; }

FunctionStats Function::stats() const {
  FunctionStats s;
  s.signatures = impl_->cache.size();
  s.hits = impl_->hits.load();
  s.misses = impl_->misses.load();
  s.diskHits = impl_->diskHits.load();
  s.compileMillis = impl_->compileMicros.load() / 1000.0;
  s.workspaceBytes = impl_->workspaceBytes.load();
  return s;
}

//===----------------------------------------------------------------------===//
// Engine
//===----------------------------------------------------------------------===//

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

Expected<std::unique_ptr<Engine>> Engine::create(EngineOptions options) {
  Expected<llvm::orc::JITTargetMachineBuilder> builder = hostMachineBuilder();
  if (!builder)
    return builder.takeError();
  Expected<unsigned> threads = resolveThreadCount(options.threads);
  if (!threads)
    return threads.takeError();
  auto impl = std::make_unique<Impl>(std::move(options), *builder);
  impl->threads = *threads;
  mlir::DialectRegistry registry;
  registerDialects(registry);
  impl->context.appendDialectRegistry(registry);
  impl->context.loadAllAvailableDialects();

  Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*builder).create();
  if (!jit)
    return jit.takeError();
  impl->jit = std::move(*jit);
  impl->cpu = hostCpuDescription();
  impl->buildIdentity = compilerBuildIdentity();
  if (std::optional<std::string> dir = ObjectCache::directoryFor(impl->options))
    impl->diskCache.emplace(*dir);
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

Expected<Function &> Engine::lookup(llvm::StringRef name) {
  std::lock_guard<std::mutex> lock(impl_->contextMutex);
  auto it = impl_->functions.find(name);
  if (it == impl_->functions.end())
    return llvm::createStringError("no function named '" + name +
                                   "' is loaded");
  return *it->second;
}

unsigned Engine::threads() const { return impl_->threads; }

std::vector<std::string> Engine::functionNames() const {
  std::lock_guard<std::mutex> lock(impl_->contextMutex);
  std::vector<std::string> names;
  for (const auto &entry : impl_->functions)
    names.push_back(entry.getKey().str());
  llvm::sort(names);
  return names;
}

std::unique_ptr<mlir::MLIRContext> Engine::Impl::acquireCompileContext() {
  {
    std::lock_guard<std::mutex> lock(compileContextsMutex);
    if (!idleCompileContexts.empty()) {
      std::unique_ptr<mlir::MLIRContext> context =
          std::move(idleCompileContexts.back());
      idleCompileContexts.pop_back();
      return context;
    }
  }
  // As the engine's own: the same dialects, all loaded (a pass may create
  // ops of a dialect it does not declare), no MLIR thread pool.
  auto context = std::make_unique<mlir::MLIRContext>(
      mlir::MLIRContext::Threading::DISABLED);
  mlir::DialectRegistry registry;
  registerDialects(registry);
  context->appendDialectRegistry(registry);
  context->loadAllAvailableDialects();
  return context;
}

void Engine::Impl::releaseCompileContext(
    std::unique_ptr<mlir::MLIRContext> context) {
  std::lock_guard<std::mutex> lock(compileContextsMutex);
  idleCompileContexts.push_back(std::move(context));
}
