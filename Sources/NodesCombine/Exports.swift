// `DispatchQueue` as a Scheduler, as Combine has it: the Nodes framework's generated view
// controllers write `.receive(on: DispatchQueue.main)`.
@_exported import Dispatch
// A file written for Combine compiles on Linux with its `import Combine` changed to
// `import NodesCombine`: this module brings OpenCombine's publishers, subjects and
// `AnyCancellable`, and what the Nodes framework adds to them.
@_exported import OpenCombine
@_exported import OpenCombineDispatch
