#if canImport(Glibc)
import Glibc
#endif

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
/// (`experimentalOpen`: `cache.delete()`). imgwarm refuses such a journal,
/// and also one whose keys break the key rule or whose lengths overflow,
/// and deletes nothing (docs/cache-formats.md). This type is the pure
/// part: parsing (`readJournal`/`readJournalLine`), the lines, and which
/// files a rebuild and a prune remove. The app version and value count
/// come from the layout; the key rule is every DiskLruCache's.
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
            // Saturating: a parsed journal's sum is checked (`parse`); ours
            // are lengths of files written.
            entries.values.reduce(Int64(0)) { total, entry in
                entry.dirty ? total : entry.lengths.reduce(total) { $0.addingReportingOverflow($1).overflow ? .max : $0 + $1 }
            }
        }
    }

    /// A journal imgwarm refuses: the line (1-based, the header's five
    /// lines included) and what is wrong with it.
    public struct Corrupt: Error, Sendable, Equatable, CustomStringConvertible {
        public let line: Int
        public let reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    /// The five header lines.
    public var header: String {
        headerLines.map { $0 + "\n" }.joined()
    }

    /// `readJournal`'s header: MAGIC, VERSION_1, the app version, the value
    /// count, a blank line; each compared as a string.
    var headerLines: [String] { [Self.magic, Self.version, String(appVersion), String(valueCount), ""] }

    /// The journal whose header starts `bytes` (its app version and value
    /// count; the key rule is every DiskLruCache's), or nil when `bytes`
    /// does not start with a DiskLruCache header a library opens: what a
    /// folder's journal says before anyone knows which layout it is.
    public static func readHeader(_ bytes: [UInt8]) -> DiskLruJournal? {
        let lines = splitLines(bytes, limit: 5).lines
        guard lines.count == 5, let appVersion = Int(lines[2]), let valueCount = Int(lines[3]), (1...9).contains(valueCount)
        else { return nil }
        let journal = DiskLruJournal(appVersion: appVersion, valueCount: valueCount)
        return journal.headerLines.elementsEqual(lines) { $0 == $1 } ? journal : nil
    }

    /// StrictLineReader: lines end at the byte '\n'; a '\r' before it is
    /// dropped. Split as bytes: as Swift `Character`s, "\r\n" is one
    /// grapheme that equals neither "\n" nor "\r", so a CR LF journal
    /// would read as one line. At most `limit` lines; `rest`: where the
    /// bytes after them start.
    static func splitLines(_ bytes: [UInt8], limit: Int = .max) -> (lines: [Substring], rest: Int) {
        var lines: [Substring] = []
        var start = bytes.startIndex
        while lines.count < limit, let newline = bytes[start...].firstIndex(of: 0x0A) {
            var end = newline
            if end > start && bytes[end - 1] == 0x0D { end -= 1 }
            lines.append(Substring(String(decoding: bytes[start..<end], as: UTF8.self)))
            start = newline + 1
        }
        return (lines, start)
    }

    public static func dirtyLine(_ key: String) -> String { "DIRTY \(key)\n" }
    public static func cleanLine(_ key: String, lengths: [Int64]) -> String {
        "CLEAN \(key)" + lengths.map { " \($0)" }.joined() + "\n"
    }
    public static func readLine(_ key: String) -> String { "READ \(key)\n" }
    public static func removeLine(_ key: String) -> String { "REMOVE \(key)\n" }

    /// The key rule of every DiskLruCache (`[a-z0-9_-]{1,120}`: Glide's
    /// `LEGAL_KEY_PATTERN` and `validateKey`, OkHttp's and Coil's
    /// `LEGAL_KEY_PATTERN` and `validateKey`); ours are 64 hex digits. The
    /// libraries check it only for a key the app passes, never for a key
    /// read from the journal; imgwarm checks every key it reads, since a
    /// key becomes a file name (`<key>.<i>`) that is unlinked and renamed:
    /// a key with `/`, `..` or a NUL would name a file outside the folder.
    public static func isValidKey<S: StringProtocol>(_ key: S) -> Bool {
        var count = 0
        for byte in key.utf8 {
            count += 1
            guard count <= 120, (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5F || byte == 0x2D
            else { return false }
        }
        return count > 0
    }

    /// The name of value `index` of `key` (`Entry.getCleanFile`), only for
    /// a key that passed `isValidKey`.
    public static func valueFileName(_ key: String, _ index: Int) -> String? {
        isValidKey(key) && index >= 0 ? "\(key).\(index)" : nil
    }

    /// Removes the value files of `key` (`<key>.0`, `<key>.1`..., and with
    /// `temps` their `.tmp`) in `folder` through `remover`: every removal
    /// of an entry's files goes through here. A key outside the key rule
    /// removes nothing (EINVAL). The first error other than ENOENT, else 0.
    func removeValueFiles(of key: String, in folder: Int32, temps: Bool = false, remover: any IndexFileRemover) -> Int32 {
        var first: Int32 = 0
        for i in 0..<valueCount {
            guard let name = Self.valueFileName(key, i) else { return EINVAL }
            for target in temps ? [name, name + ".tmp"] : [name] {
                let e = remover.unlink(target, in: folder)
                if e != 0 && e != ENOENT && first == 0 { first = e }
            }
        }
        return first
    }

    /// One length of a CLEAN line: decimal digits only (Java's
    /// `Long.parseLong` also takes a sign; a negative length is no file's),
    /// at most `Int64.max`.
    static func parseLength<S: StringProtocol>(_ text: S) -> Int64? {
        var value: Int64 = 0
        var digits = 0
        for byte in text.utf8 {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            digits += 1
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = times10.addingReportingOverflow(Int64(byte - 0x30))
            if o1 || o2 { return nil }
            value = next
        }
        return digits > 0 ? value : nil
    }

    /// The longest line imgwarm reads, its '\r' included (not its '\n').
    /// The libraries set none (okio's `readUtf8LineStrict()` reads up to
    /// `Long.MAX_VALUE` bytes; Glide's `StrictLineReader` grows its buffer),
    /// but the longest line they write is a CLEAN line of a 120-byte key
    /// and its lengths, at most 19 digits each: 166 bytes at the layouts'
    /// two values, 306 at nine (the most `readHeader` takes). A longer line
    /// is no journal line, and reading it whole would cost its length in
    /// memory.
    public static let maxLineBytes = 64 << 10

    /// Reads a journal as `readJournal` does, and stricter: throws
    /// `Corrupt` (naming the line) for what the library would call corrupt
    /// (and delete the folder for), and for what it reads but imgwarm
    /// refuses: a key outside the key rule, a negative length, lengths
    /// whose sum (of an entry, or of all entries) overflows 64 bits, a
    /// line longer than `maxLineBytes`.
    public func parse(_ bytes: [UInt8]) throws -> Contents {
        var reader = Reader(self)
        try bytes.withUnsafeBytes { try reader.read($0) }
        return try reader.finish()
    }

    /// The journal read in pieces of any size, line by line as okio's
    /// `readUtf8LineStrict` reads it: what it holds is the entries (one
    /// per live key) and at most one unfinished line, never the file, so
    /// a journal of a million READ lines of one key costs one entry.
    public struct Reader: Sendable {
        public let journal: DiskLruJournal
        private var contents = Contents()
        private var header: [Substring] = []
        /// The bytes of the line not yet ended by a '\n'.
        private var partial: [UInt8] = []
        /// Lines ended so far, the header's included.
        private var linesEnded = 0
        /// The sum of all entries' lengths so far (`readLine`).
        private var total: Int64 = 0

        public init(_ journal: DiskLruJournal) { self.journal = journal }

        /// The next bytes of the journal.
        public mutating func read(_ bytes: UnsafeRawBufferPointer) throws {
            guard let base = bytes.baseAddress else { return }
            var start = 0
            while start < bytes.count {
                guard let found = memchr(base + start, 0x0A, bytes.count - start) else {
                    if partial.count + bytes.count - start > maxLineBytes { throw tooLong() }
                    partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start...]))
                    return
                }
                let newline = base.distance(to: UnsafeRawPointer(found))
                if partial.isEmpty {
                    try endLine(UnsafeRawBufferPointer(rebasing: bytes[start..<newline]))
                } else {
                    partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<newline]))
                    let line = partial
                    partial.removeAll(keepingCapacity: true)
                    try line.withUnsafeBytes { try endLine($0) }
                }
                start = newline + 1
            }
        }

        /// What the journal said, once all of it was read.
        public mutating func finish() throws -> Contents {
            guard header.count == 5 else {
                throw Corrupt(line: header.count + 1, reason: "the journal ends inside its header (\(header.count) of 5 lines)")
            }
            // A line without its '\n' is not read (`readUtf8LineStrict`
            // throws EOFException for it).
            contents.unterminatedTail = !partial.isEmpty
            return contents
        }

        private func tooLong() -> Corrupt {
            Corrupt(line: linesEnded + 1, reason: "a line of more than \(maxLineBytes) bytes, longer than any journal line")
        }

        /// One line, its '\n' not included.
        private mutating func endLine(_ bytes: UnsafeRawBufferPointer) throws {
            if bytes.count > maxLineBytes { throw tooLong() }
            var end = bytes.count
            // StrictLineReader drops a '\r' before the '\n'.
            if end > 0 && bytes[end - 1] == 0x0D { end -= 1 }
            let line = Substring(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<end]), as: UTF8.self))
            linesEnded += 1
            if header.count < 5 {
                // The header is judged whole, as `readJournal` reads its
                // five lines before it compares them.
                header.append(line)
                if header.count == 5 {
                    for (i, want) in journal.headerLines.enumerated() where header[i] != want {
                        throw Corrupt(line: i + 1, reason: "header line \"\(header[i].prefix(80))\" where DiskLruCache app version "
                            + "\(journal.appVersion) with \(journal.valueCount) value\(journal.valueCount == 1 ? "" : "s") per entry has \"\(want)\"")
                    }
                }
                return
            }
            try journal.readLine(line, position: linesEnded - 5, total: &total, into: &contents)
            contents.lineCount += 1
        }
    }

    /// `readJournalLine`, with every key checked. `total`: the sum of all
    /// entries' lengths so far (checked for overflow, so every later sum
    /// of them is too).
    func readLine(_ line: Substring, position: Int, total: inout Int64, into contents: inout Contents) throws {
        func corrupt(_ what: String) -> Corrupt { Corrupt(line: position + 5, reason: "\(what): \(line.prefix(200))") }
        guard let firstSpace = line.firstIndex(of: " ") else { throw corrupt("not a journal line") }
        let verb = line[..<firstSpace]
        guard verb == "CLEAN" || verb == "DIRTY" || verb == "READ" || verb == "REMOVE" else {
            throw corrupt("not a journal line (CLEAN, DIRTY, READ or REMOVE)")
        }
        let afterKey = line.index(after: firstSpace)
        let secondSpace = line[afterKey...].firstIndex(of: " ")
        let key = line[afterKey..<(secondSpace ?? line.endIndex)]
        guard Self.isValidKey(key) else {
            throw corrupt("the key is not a DiskLruCache key ([a-z0-9_-]{1,120})")
        }
        let keyString = String(key)
        let previousSum = contents.entries[keyString].map { Self.sum($0.lengths) ?? 0 } ?? 0
        if secondSpace == nil && verb == "REMOVE" {
            contents.entries[keyString] = nil
            total -= previousSum
            return
        }
        var entry = contents.entries[keyString] ?? Entry(lengths: Array(repeating: 0, count: valueCount))
        entry.touch = position
        if let secondSpace, verb == "CLEAN" {
            // Java's `split(" ")` drops trailing empty strings.
            var parts = line[line.index(after: secondSpace)...].split(separator: " ", omittingEmptySubsequences: false)
            while parts.count > 1, parts.last?.isEmpty == true { parts.removeLast() }
            guard parts.count == valueCount else {
                throw corrupt("\(parts.count) length\(parts.count == 1 ? "" : "s") where an entry has \(valueCount)")
            }
            var lengths: [Int64] = []
            for part in parts {
                guard let n = Self.parseLength(part) else { throw corrupt("a length that is not a number from 0 to \(Int64.max)") }
                lengths.append(n)
            }
            guard let sum = Self.sum(lengths) else { throw corrupt("the lengths add up to more than \(Int64.max)") }
            let (newTotal, overflow) = (total - previousSum).addingReportingOverflow(sum)
            guard !overflow else { throw corrupt("the entries' lengths add up to more than \(Int64.max)") }
            total = newTotal
            entry.lengths = lengths
            entry.readable = true
            entry.dirty = false
        } else if secondSpace == nil && verb == "DIRTY" {
            entry.dirty = true
        } else if secondSpace == nil && verb == "READ" {
            // Only the order changes.
        } else {
            throw corrupt("not a journal line")
        }
        contents.entries[keyString] = entry
    }

    /// The sum of `lengths`, nil when it overflows.
    static func sum(_ lengths: [Int64]) -> Int64? {
        var total: Int64 = 0
        for n in lengths {
            let (next, overflow) = total.addingReportingOverflow(n)
            if overflow { return nil }
            total = next
        }
        return total
    }

    /// The keys of edits that never ended (DIRTY without CLEAN or REMOVE):
    /// `processJournal` deletes their files and drops them.
    public static func deadEdits(_ contents: Contents) -> [String] {
        contents.entries.filter { $0.value.dirty }.map(\.key).sorted()
    }

    /// `trimToSize`: the least recently used readable entries to remove
    /// until the size is at most `limit`; `keep(key)`: an entry that stays
    /// (pinned). Each with its length.
    public static func evictions(_ contents: Contents, limit: Int64, keep: (String) -> Bool) -> [(key: String, bytes: Int64)] {
        var size = contents.size
        var out: [(key: String, bytes: Int64)] = []
        for key in contents.lruOrder where size > limit {
            guard let entry = contents.entries[key], !entry.dirty, !keep(key) else { continue }
            let bytes = sum(entry.lengths) ?? 0
            size -= bytes
            out.append((key, bytes))
        }
        return out
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
