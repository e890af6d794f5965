/// Lower-case hex of a fixed width, leading zeros kept: the random and
/// per-process parts of temp file names.
enum FixedHex {
    static func digits8(_ v: UInt32) -> String {
        let h = String(v, radix: 16)
        return String(repeating: "0", count: 8 - h.count) + h
    }

    static func digits16(_ v: UInt64) -> String {
        digits8(UInt32(truncatingIfNeeded: v >> 32)) + digits8(UInt32(truncatingIfNeeded: v))
    }
}
