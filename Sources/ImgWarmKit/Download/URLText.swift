import Foundation

/// Text for one-line messages.
enum URLText {
    /// Control characters (CR, LF, tabs) become spaces: messages are one line.
    static func oneLine(_ text: String) -> String {
        // Fast path: printable ASCII, the common case for URLs.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            return text.utf8.first == 0x20 || text.utf8.last == 0x20 ? text.trimmingCharacters(in: .whitespaces) : text
        }
        return String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
            .trimmingCharacters(in: .whitespaces)
    }
}
