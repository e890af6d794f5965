import ImgWarmSupport
/// Tells data that is plainly no image from data of an unknown binary
/// format. The usual culprits behind a URL that should have served an
/// image are an HTML error or login page, a JSON error body, or a gzip
/// body the server forgot to label: those are `not an image (looks like
/// HTML)`. Binary data with no signature known here may still be an image
/// an app shows (SDWebImage hands any data to ImageIO), so it is only
/// named by its first bytes.
package enum ContentGuess {
    /// What the data looks like when that is something other than an
    /// image; nil for binary data of no known kind.
    static func nonImage(_ bytes: UnsafeRawBufferPointer) -> String? {
        var start = 0
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { start = 3 }
        while start < bytes.count && start < 1024 && isSpace(bytes[start]) { start += 1 }
        let head = bytes[start..<min(bytes.count, start + 512)]
        let lower = String(decoding: head.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)

        if lower.hasPrefix("<!doctype html") || lower.hasPrefix("<html")
            || (lower.hasPrefix("<") && (lower.contains("<html") || lower.contains("<head") || lower.contains("<body"))) {
            return "looks like HTML"
        }
        if lower.hasPrefix("<?xml") || lower.hasPrefix("<") { return "looks like XML" }
        if lower.hasPrefix("{") || lower.hasPrefix("[") { return "looks like JSON" }
        if bytes.count >= 2 && bytes[0] == 0x1F && bytes[1] == 0x8B { return "looks like gzip-compressed data" }
        if !head.isEmpty && head.allSatisfy({ isSpace($0) || ($0 >= 0x20 && $0 != 0x7F) }) {
            return "looks like text"
        }
        return nil
    }

    /// `unknown signature 00 01 02 fe`: the first four bytes in hex.
    package static func signature(_ bytes: UnsafeRawBufferPointer) -> String {
        let magic = bytes.prefix(4).map { Hex.encode(CollectionOfOne($0)) }
        return "unknown signature " + magic.joined(separator: " ")
    }

    private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
}
