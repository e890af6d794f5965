// What Manifest.swift uses from files the manifest fuzz target leaves out
// (DiskCache.swift would pull in swift-crypto and the whole cache layer).
#if canImport(Glibc)
import Glibc
#endif

func errnoString(_ e: Int32) -> String { String(cString: strerror(e)) }
