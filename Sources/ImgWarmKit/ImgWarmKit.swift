// The engine's targets under one name, for the CLI, the benchmarks and the
// tests that take the engine as a whole. Each target may import only those
// below it (Package.swift; docs/architecture.md, "Layers").
@_exported import ImgWarmSupport
@_exported import ImgWarmDecode
@_exported import ImgWarmDownload
@_exported import ImgWarmCache
@_exported import ImgWarmInspect
@_exported import ImgWarmReport
@_exported import ImgWarmWarm
