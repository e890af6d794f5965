import Foundation

/// Sizes and durations as users type them: `500M`, `2GiB`, `7d`.
public enum Units {
    public struct ParseError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// A number of bytes, or with `k M G T` (powers of 1000) or
    /// `KiB MiB GiB TiB` (powers of 1024). `B` may follow (`500MB`).
    public static func parseSize(_ text: String) throws -> UInt64 {
        let t = text.trimmingWhitespace()
        let (number, suffix) = splitNumber(t)
        guard !number.isEmpty, let value = Double(number), value.isFinite, value >= 0 else {
            throw ParseError(description: "invalid size '\(text)': expected a number of bytes with an optional unit (k, M, G, T, KiB, MiB, GiB, TiB), e.g. 500M or 2GiB")
        }
        let multipliers: [String: Double] = [
            "": 1, "b": 1,
            "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
            "ki": 1024, "kib": 1024, "mi": 1048576, "mib": 1048576,
            "gi": 1073741824, "gib": 1073741824, "ti": 1099511627776, "tib": 1099511627776,
        ]
        guard let m = multipliers[suffix.lowercased()] else {
            throw ParseError(description: "invalid size '\(text)': unknown unit '\(suffix)' (use k, M, G, T for powers of 1000 or KiB, MiB, GiB, TiB for powers of 1024)")
        }
        let bytes = (value * m).rounded()
        guard bytes < 1.8e19 else {
            throw ParseError(description: "invalid size '\(text)': too large")
        }
        if suffix.isEmpty && number.contains(".") {
            throw ParseError(description: "invalid size '\(text)': a byte count must be a whole number")
        }
        return UInt64(bytes)
    }

    /// Seconds, from a number with `s m h d w` (a bare number is seconds).
    public static func parseDuration(_ text: String) throws -> Double {
        let t = text.trimmingWhitespace()
        let (number, suffix) = splitNumber(t)
        guard !number.isEmpty, let value = Double(number), value.isFinite, value >= 0 else {
            throw ParseError(description: "invalid duration '\(text)': expected a number with an optional unit (s, m, h, d, w), e.g. 30d or 12h")
        }
        let multipliers: [String: Double] = ["": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800]
        guard let m = multipliers[suffix] ?? multipliers[suffix.lowercased()] else {
            throw ParseError(description: "invalid duration '\(text)': unknown unit '\(suffix)' (use s, m, h, d or w)")
        }
        return value * m
    }

    /// `1.5 MiB`-style text for summaries.
    public static func formatBytes(_ bytes: UInt64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var v = Double(bytes)
        var i = 0
        while v >= 1024 && i < units.count - 1 {
            v /= 1024
            i += 1
        }
        if i == 0 { return "\(bytes) B" }
        return String(format: "%.1f %@", v, units[i])
    }

    private static func splitNumber(_ t: String) -> (String, String) {
        var idx = t.startIndex
        while idx < t.endIndex, t[idx].isNumber || t[idx] == "." { idx = t.index(after: idx) }
        return (String(t[..<idx]), String(t[idx...]).trimmingWhitespace())
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
