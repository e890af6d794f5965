#if canImport(Glibc)
import Glibc
#endif

func errnoString(_ e: Int32) -> String { String(cString: strerror(e)) }
