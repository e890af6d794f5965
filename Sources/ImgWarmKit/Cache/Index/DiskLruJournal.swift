/// The journal of a DiskLruCache folder, read and written as the library
/// does. Glide keeps its own copy of the 2011 Android class
/// (`third_party/disklrucache/.../DiskLruCache.java`); Coil 2 and 3 a Kotlin
/// port of OkHttp's (`coil3/disk/DiskLruCache.kt`). Both read the same
/// journal:
///
///     libcore.io.DiskLruCache      MAGIC
///     1                            VERSION_1
///     1                            app version (Glide 1, Coil 2: 1, Coil 3: 3)
///     1                            value count (Glide 1, Coil 2)
///                                  blank
///     DIRTY <key>                  an edit started
///     CLEAN <key> <len>...         ... and was published, one length per value
///     READ <key>                   a read (LRU order)
///     REMOVE <key>                 removed
///
/// A journal whose header differs, or with a line neither class reads, is
/// "corrupt" to the library and the whole folder is deleted
/// (`experimentalOpen`: `cache.delete()`). This type is the pure part:
/// parsing (`readJournal`/`readJournalLine`) and the lines.
public struct DiskLruJournal: Sendable, Equatable {
    public static let magic = "libcore.io.DiskLruCache"
    public static let version = "1"

    public let appVersion: Int
    public let valueCount: Int
    /// When the library rebuilds its journal after an operation: Glide
    /// (and OkHttp) at 2,000 redundant lines and at least as many as there
    /// are entries; Coil at 2,000 (`journalRewriteRequired`).
    public let rebuildNeedsEntryCount: Bool

    public init(appVersion: Int, valueCount: Int, rebuildNeedsEntryCount: Bool = true) {
        self.appVersion = appVersion
        self.valueCount = valueCount
        self.rebuildNeedsEntryCount = rebuildNeedsEntryCount
    }

    /// One key's state after the journal lines read so far.
    public struct Entry: Sendable, Equatable {
        public var lengths: [Int64]
        /// A CLEAN line was seen (`Entry.readable`).
        public var readable = false
        /// The last DIRTY line has no CLEAN or REMOVE after it
        /// (`currentEditor != null`): an edit that never ended.
        public var dirty = false
        /// The position of the last line that named the key: LRU order
        /// (`LinkedHashMap(accessOrder = true)` moves a key to the end on
        /// every `get`, and `readJournalLine` gets it for every line).
        public var touch = 0
    }

    /// What a journal says.
    public struct Contents: Sendable, Equatable {
        public var entries: [String: Entry] = [:]
        /// Lines after the header that were read whole.
        public var lineCount = 0
        /// The file ends in a line without its newline: the library reads
        /// up to it and rebuilds the journal before appending
        /// (`reader.hasUnterminatedLine()`).
        public var unterminatedTail = false
        /// `redundantOpCount = lineCount - lruEntries.size()`.
        public var redundantOpCount: Int { lineCount - entries.count }

        /// Keys in LRU order, least recently used first.
        public var lruOrder: [String] {
            entries.sorted { $0.value.touch < $1.value.touch }.map(\.key)
        }

        /// The sum of the readable entries' lengths (`size` after
        /// `processJournal`, which drops the dirty ones).
        public var size: Int64 {
            entries.values.reduce(0) { $0 + ($1.dirty ? 0 : $1.lengths.reduce(0, +)) }
        }
    }

    public struct Corrupt: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The five header lines.
    public var header: String {
        "\(Self.magic)\n\(Self.version)\n\(appVersion)\n\(valueCount)\n\n"
    }

    public static func dirtyLine(_ key: String) -> String { "DIRTY \(key)\n" }
    public static func cleanLine(_ key: String, lengths: [Int64]) -> String {
        "CLEAN \(key)" + lengths.map { " \($0)" }.joined() + "\n"
    }
    public static func readLine(_ key: String) -> String { "READ \(key)\n" }
    public static func removeLine(_ key: String) -> String { "REMOVE \(key)\n" }

    /// The keys both libraries accept (`[a-z0-9_-]{1,120}`); ours are
    /// 64 hex digits.
    public static func isValidKey(_ key: Substring) -> Bool {
        !key.isEmpty && key.count <= 120 && key.utf8.allSatisfy {
            ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2D
        }
    }

    /// Reads a journal as `readJournal` does. Throws `Corrupt` for what
    /// the library would call corrupt (and delete the folder for).
    public func parse(_ bytes: [UInt8]) throws -> Contents {
        // StrictLineReader: lines end at '\n'; a '\r' before it is dropped.
        var lines: [Substring] = []
        var contents = Contents()
        let text = String(decoding: bytes, as: UTF8.self)
        var rest = Substring(text)
        while let newline = rest.firstIndex(of: "\n") {
            var line = rest[..<newline]
            if line.hasSuffix("\r") { line = line.dropLast() }
            lines.append(line)
            rest = rest[rest.index(after: newline)...]
        }
        contents.unterminatedTail = !rest.isEmpty
        guard lines.count >= 5 else {
            throw Corrupt(description: "journal ends inside its header (\(lines.count) of 5 lines)")
        }
        let head = lines[0..<5].map(String.init)
        if head[0] != Self.magic || head[1] != Self.version || head[2] != String(appVersion)
            || head[3] != String(valueCount) || head[4] != "" {
            throw Corrupt(description: "journal header [\(head.joined(separator: ", "))]: not app version \(appVersion) with \(valueCount) value\(valueCount == 1 ? "" : "s") per entry")
        }
        for (offset, line) in lines[5...].enumerated() {
            try readLine(line, position: offset + 1, into: &contents)
            contents.lineCount += 1
        }
        return contents
    }

    /// `readJournalLine`.
    func readLine(_ line: Substring, position: Int, into contents: inout Contents) throws {
        func corrupt() -> Corrupt { Corrupt(description: "unexpected journal line \(position + 5): \(line.prefix(200))") }
        guard let firstSpace = line.firstIndex(of: " ") else { throw corrupt() }
        let verb = line[..<firstSpace]
        let afterKey = line.index(after: firstSpace)
        let secondSpace = line[afterKey...].firstIndex(of: " ")
        let key = String(line[afterKey..<(secondSpace ?? line.endIndex)])
        if secondSpace == nil && verb == "REMOVE" {
            contents.entries[key] = nil
            return
        }
        var entry = contents.entries[key] ?? Entry(lengths: Array(repeating: 0, count: valueCount))
        entry.touch = position
        if let secondSpace, verb == "CLEAN" {
            // Java's `split(" ")` drops trailing empty strings.
            var parts = line[line.index(after: secondSpace)...].split(separator: " ", omittingEmptySubsequences: false)
            while parts.count > 1, parts.last?.isEmpty == true { parts.removeLast() }
            guard parts.count == valueCount else { throw corrupt() }
            var lengths: [Int64] = []
            for part in parts {
                guard let n = Int64(part) else { throw corrupt() }
                lengths.append(n)
            }
            entry.lengths = lengths
            entry.readable = true
            entry.dirty = false
        } else if secondSpace == nil && verb == "DIRTY" {
            entry.dirty = true
        } else if secondSpace == nil && verb == "READ" {
            // Only the order changes.
        } else {
            throw corrupt()
        }
        contents.entries[key] = entry
    }

    /// Glide's `journalRebuildRequired`: at least 2,000 redundant lines,
    /// and at least as many as there are entries; Coil's
    /// `journalRewriteRequired`: at least 2,000.
    public func rebuildRequired(redundantOpCount: Int, entryCount: Int) -> Bool {
        redundantOpCount >= 2000 && (!rebuildNeedsEntryCount || redundantOpCount >= entryCount)
    }

    /// The journal `rebuildJournal` writes: the header, then one line per
    /// entry in LRU order (CLEAN, or DIRTY for an edit in progress; we
    /// leave none in progress, see `DiskLruIndex`).
    public func rebuilt(_ contents: Contents) -> String {
        var text = header
        for key in contents.lruOrder {
            guard let entry = contents.entries[key] else { continue }
            text += entry.dirty ? Self.dirtyLine(key) : Self.cleanLine(key, lengths: entry.lengths)
        }
        return text
    }
}
