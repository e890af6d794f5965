#if canImport(Glibc)
import Glibc
#endif

package func errnoString(_ e: Int32) -> String { String(cString: strerror(e)) }
