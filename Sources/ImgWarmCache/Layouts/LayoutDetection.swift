#if canImport(Glibc)
import Glibc
#endif
import CFileScan
import ImgWarmSupport

/// The index a library keeps beside its files, as far as telling layouts
/// apart needs it.
public enum CacheIndexKind: Equatable, Sendable {
    /// A plain folder of files (the iOS layouts).
    case none
    /// A DiskLruCache `journal` whose header carries the app version and
    /// the value count the library opens it with.
    case diskLruJournal(appVersion: Int, valueCount: Int)
    /// flutter_cache_manager's `libCachedImageData.db` (table `cacheObject`).
    case flutterDatabase
}

/// What a folder of each layout looks like, as its layout describes it
/// (`CacheLayout.indexKind`, `defaultFolderNames`, `holdsEntries`,
/// `fitsEntryName`): a new layout plugs in by answering those.
extension CacheLayoutKind {
    /// The layout's description of its folder.
    var described: any CacheLayout { Self.registry[Self.position[self] ?? 0] }

    private static let position: [CacheLayoutKind: Int] = Dictionary(uniqueKeysWithValues: allCases.enumerated().map { ($1, $0) })

    public var indexKind: CacheIndexKind { described.indexKind }

    /// The names of the index's files in the cache folder: never entries,
    /// never judged as images.
    public var indexFileNames: Set<String> { indexKind.fileNames }

    public var defaultFolderNames: [String] { described.defaultFolderNames }

    public func holdsEntries(inFolder folder: String) -> Bool { described.holdsEntries(inFolder: folder) }

    /// Whether `name`, a visible file in `folder` ("" for the cache folder
    /// itself), is a name the library gives its files there: an entry, a
    /// value file (also its `.tmp` while written), or the index.
    public func fitsName(_ name: String, inFolder folder: String) -> Bool {
        fitsName(Array(name.utf8), name: name, inFolder: folder)
    }

    /// `fitsName` with the name's bytes at hand (the survey checks every
    /// file against every layout).
    func fitsName(_ b: [UInt8], name: String, inFolder folder: String) -> Bool {
        let layout = described
        let index = layout.indexKind
        // Index files; their names start past "f", where no hex name does.
        if folder.isEmpty, let first = b.first, first > 0x66, index != .none { return index.fileNames.contains(name) }
        if !folder.isEmpty && !layout.holdsEntries(inFolder: folder) { return false }
        return layout.fitsEntryName(b, inFolder: folder)
    }
}

extension CacheIndexKind {
    /// The index's files in the cache folder.
    public var fileNames: Set<String> {
        switch self {
        case .none: return []
        // DiskLruCache's JOURNAL_FILE, JOURNAL_FILE_BACKUP, JOURNAL_FILE_TEMP.
        case .diskLruJournal: return ["journal", "journal.bkp", "journal.tmp"]
        // sqflite's database and SQLite's files beside it.
        case .flutterDatabase:
            let db = FlutterLayout.storeKey + ".db"
            return [db, db + "-journal", db + "-wal", db + "-shm"]
        }
    }
}

/// Byte rules for file names.
enum NameRule {
    enum Extension { case none, word, any }

    static func isHex(_ c: UInt8) -> Bool { (0x30...0x39).contains(c) || (0x61...0x66).contains(c) }

    /// `count` lowercase hex digits, then nothing or `.ext`: `word` is 1 to
    /// 16 letters and digits with a letter among them (a number would be a
    /// DiskLruCache value index), `any` is any extension SDWebImage keeps.
    static func hex(_ b: [UInt8], _ count: Int, extension ext: Extension) -> Bool {
        guard b.count >= count, b[..<count].allSatisfy(isHex) else { return false }
        if b.count == count { return true }
        guard b[count] == 0x2E, ext != .none else { return false }
        let tail = b[(count + 1)...]
        switch ext {
        case .none: return false
        case .any: return !tail.isEmpty && tail.count <= CacheFileName.maxExtensionLength && !tail.contains(0x2F)
        case .word:
            let alnum = tail.allSatisfy { isHex($0) || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) || (0x41...0x5A).contains($0) }
            let letter = tail.contains { (0x61...0x7A).contains($0) || (0x41...0x5A).contains($0) }
            return (1...16).contains(tail.count) && alnum && letter
        }
    }

    /// `<key>.<i>` or `<key>.<i>.tmp` with a `keyLength`-digit hex key and
    /// `i` below `valueCount`.
    static func valueFile(_ b: [UInt8], keyLength: Int, valueCount: Int) -> Bool {
        guard b.count >= keyLength + 2, b[..<keyLength].allSatisfy(isHex), b[keyLength] == 0x2E else { return false }
        let rest = b[(keyLength + 1)...]
        guard let digit = rest.first, (0x30...0x39).contains(digit), Int(digit - 0x30) < valueCount else { return false }
        let after = rest.dropFirst()
        return after.isEmpty || Array(after) == Array(".tmp".utf8)
    }

    /// Fresco's `v2.ols100.1`, or that folder's shard `<0-99>` or `<0-99>.0`.
    static func frescoFolder(_ folder: String) -> Bool {
        let version = FrescoLayout.versionFolder
        if folder == version { return true }
        guard folder.hasPrefix(version + "/") else { return false }
        var shard = Substring(folder.dropFirst(version.count + 1))
        if shard.hasSuffix(".0") { shard = shard.dropLast(2) }
        guard let n = Int(shard), (0..<100).contains(n), String(n) == shard else { return false }
        return true
    }

    /// 27 URL-safe Base64 characters (20 bytes, no padding), then `.cnt`.
    static func frescoContentFile(_ b: [UInt8]) -> Bool {
        guard b.count == 27 + 4, Array(b[27...]) == Array(".cnt".utf8) else { return false }
        return b[..<27].allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D || $0 == 0x5F }
    }

    /// A UUID in its 8-4-4-4-12 hex form, then nothing or `.ext`.
    static func uuid(_ b: [UInt8]) -> Bool {
        guard b.count >= 36 else { return false }
        for (i, c) in b[..<36].enumerated() {
            if [8, 13, 18, 23].contains(i) { if c != 0x2D { return false } } else if !isHex(c) { return false }
        }
        if b.count == 36 { return true }
        return b[36] == 0x2E && b.count > 37 && b.count <= 36 + 1 + 32 && !b.contains(0x2F)
    }
}

/// What a cache folder holds, as far as recognising it and detecting its
/// layout needs: read once, read-only (nothing is created, no index is
/// opened for writing, no database is opened at all).
public struct CacheFolderSurvey: Sendable, Equatable {
    /// The layout `.imgwarm/layout` records (the first warm writes it).
    public var recordedLayout: String?
    /// `.imgwarm` is there.
    public var holdsState = false
    /// A `.git` is in the folder itself.
    public var holdsGit = false
    /// A DiskLruCache `journal` header's app version and value count.
    public var journalHeader: JournalHeader?
    /// `libCachedImageData.db` is an SQLite database with flutter's table.
    public var flutterSchema = false
    /// Whether the names were surveyed: not when a recorded layout or a
    /// known index already says what the folder is.
    public var namesSurveyed = false
    /// Visible files and folders (the walk's sub-folders count as names).
    public var visibleNames = 0
    /// Per layout: up to three visible names that do not fit its naming.
    public var misfits: [CacheLayoutKind: [String]] = [:]
    /// Per layout: how many visible files fit its naming.
    public var fitting: [CacheLayoutKind: Int] = [:]

    public struct JournalHeader: Sendable, Equatable {
        public var appVersion: Int
        public var valueCount: Int
        public init(appVersion: Int, valueCount: Int) {
            self.appVersion = appVersion
            self.valueCount = valueCount
        }
    }

    public init() {}

    /// Whether the folder's own index is `kind`'s.
    public func holdsIndex(of kind: CacheLayoutKind) -> Bool {
        switch kind.indexKind {
        case .none: return false
        case .diskLruJournal(let appVersion, let valueCount):
            return journalHeader == JournalHeader(appVersion: appVersion, valueCount: valueCount)
        case .flutterDatabase: return flutterSchema
        }
    }

    /// Every visible name fits `kind`'s naming.
    public func namesFit(_ kind: CacheLayoutKind) -> Bool { namesSurveyed && misfits[kind, default: []].isEmpty }

    /// At most this many misfits are kept per layout; the survey stops
    /// early once every layout has this many.
    public static let misfitsKept = 3

    /// Surveys the folder opened as `root`.
    public static func survey(_ root: FolderHandle) -> CacheFolderSurvey {
        var s = CacheFolderSurvey()
        var raw = imgwarm_identity_t()
        s.holdsGit = imgwarm_identity_at(root.fd, ".git", &raw) == 0
        if imgwarm_identity_at(root.fd, ".imgwarm", &raw) == 0 && raw.mode & UInt32(S_IFMT) == UInt32(S_IFDIR) {
            s.holdsState = true
            if let state = try? FolderHandle.open(".imgwarm", in: root.fd, path: root.path + "/.imgwarm", listing: false),
               let bytes = readHead(state.fd, LayoutRecord.fileName, limit: 64) {
                let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                if !text.isEmpty { s.recordedLayout = text }
            }
        }
        if let head = readHead(root.fd, "journal", limit: 512) { s.journalHeader = parseJournalHeader(head) }
        if let head = readHead(root.fd, FlutterLayout.storeKey + ".db", limit: 64 * 1024) { s.flutterSchema = isFlutterDatabase(head) }
        if s.recordedLayout != nil || CacheLayoutKind.registry.contains(where: { s.holdsIndex(of: $0.kind) }) { return s }
        s.namesSurveyed = true
        struct Enough: Error {}
        var walker = DirectoryWalker()
        walker.descends = true
        let kinds = CacheLayoutKind.registry.map(\.kind)
        // Per layout (in `kinds` order): files that fit, and whether three
        // misfits are already kept.
        var fitting = [Int](repeating: 0, count: kinds.count)
        var misfitsFull = [Bool](repeating: false, count: kinds.count)
        var full = 0
        func note(_ name: String, folder: String, isFolder: Bool) throws {
            s.visibleNames += 1
            let bytes = Array(name.utf8)
            for (k, kind) in kinds.enumerated() {
                let fits = isFolder ? kind.holdsEntries(inFolder: name) : kind.fitsName(bytes, name: name, inFolder: folder)
                if fits {
                    if !isFolder { fitting[k] += 1 }
                } else if !misfitsFull[k] {
                    let shown = folder.isEmpty ? name : folder + "/" + name
                    s.misfits[kind, default: []].append(isFolder ? shown + "/" : shown)
                    if s.misfits[kind, default: []].count >= misfitsKept {
                        misfitsFull[k] = true
                        full += 1
                    }
                }
            }
            if full == kinds.count { throw Enough() }
        }
        // A folder of the cache folder itself is a name too (noted once
        // walked); deeper ones show through the files in them.
        var enough = false
        walker.onLeaveFolder = { _, name, _, parentIndex in
            if parentIndex == 0 && !enough { enough = (try? note(name, folder: "", isFolder: true)) == nil }
        }
        do {
            try walker.walk(root) { entry in
                if enough { throw Enough() }
                try note(entry.nameString, folder: entry.directoryPath, isFolder: false)
            }
        } catch {}
        for (k, kind) in kinds.enumerated() { s.fitting[kind] = fitting[k] }
        return s
    }

    /// The first `limit` bytes of regular file `name` in `dirfd`, opened
    /// without following a link and without blocking on a FIFO.
    static func readHead(_ dirfd: Int32, _ name: String, limit: Int) -> [UInt8]? {
        let fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: limit)
        var count = 0
        while count < limit {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, limit - count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            count += n
        }
        return Array(bytes[..<count])
    }

    /// The app version and value count of a DiskLruCache journal's header
    /// (`DiskLruJournal.readHeader`).
    static func parseJournalHeader(_ head: [UInt8]) -> JournalHeader? {
        DiskLruJournal.readHeader(head).map { JournalHeader(appVersion: $0.appVersion, valueCount: $0.valueCount) }
    }

    /// An SQLite file (`SQLite format 3\0`) whose schema on its first page
    /// creates flutter_cache_manager's `cacheObject` table
    /// (`CacheObjectProvider.open`'s `onCreate`).
    static func isFlutterDatabase(_ head: [UInt8]) -> Bool {
        let magic = Array("SQLite format 3".utf8) + [0]
        guard head.count >= 100, Array(head[..<16]) == magic else { return false }
        let needle = Array("create table cacheobject".utf8)
        let lowered = head.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
        guard lowered.count >= needle.count else { return false }
        for i in 0...(lowered.count - needle.count) where lowered[i] == needle[0] {
            if Array(lowered[i..<(i + needle.count)]) == needle { return true }
        }
        return false
    }
}

/// `.imgwarm/layout`: the layout the first warm wrote the folder in.
public enum LayoutRecord {
    static let fileName = "layout"

    /// Writes `kind` into `state` when nothing is recorded yet (a folder
    /// from before this record keeps working: the first warm records it).
    public static func recordIfMissing(_ kind: CacheLayoutKind, in state: FolderHandle) {
        let fd = openat(state.fd, fileName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        if fd < 0 { return }
        let text = Array((kind.rawValue + "\n").utf8)
        _ = text.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
        close(fd)
    }
}

/// How the layout of an existing folder is told, in order: the layout
/// `.imgwarm/layout` records; the index (journal header, flutter's
/// database); the names of the entries; the folder name each library uses
/// by default; else sdwebimage.
public enum LayoutDetection {
    public enum Outcome: Equatable, Sendable {
        case detected(CacheLayoutKind, because: String)
        /// Several layouts fit equally: the user must say which.
        case tie([CacheLayoutKind], because: String)
    }

    /// The layouts the folder's contents point to (record, index, names),
    /// with the reason; empty when its contents say nothing (empty, or
    /// names no layout gives).
    public static func fromContents(_ s: CacheFolderSurvey) -> ([CacheLayoutKind], String) {
        if let recorded = s.recordedLayout, let kind = CacheLayoutKind(rawValue: recorded.lowercased()) {
            return ([kind], "the layout recorded in .imgwarm/layout")
        }
        let indexed = CacheLayoutKind.registry.map(\.kind).filter { s.holdsIndex(of: $0) }
        if !indexed.isEmpty { return (indexed, "its index") }
        let named = CacheLayoutKind.registry.map(\.kind).filter { s.namesFit($0) && s.fitting[$0, default: 0] > 0 }
        if !named.isEmpty { return (named, "the names of its files") }
        return ([], "")
    }

    /// The layout of folder `path` (its survey `s`) when none was given.
    public static func detect(_ s: CacheFolderSurvey, path: String) -> Outcome {
        let (candidates, reason) = fromContents(s)
        if candidates.count == 1 { return .detected(candidates[0], because: reason) }
        if candidates.count > 1 { return .tie(candidates, because: reason) }
        let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
        let byName = CacheLayoutKind.registry.filter { layout in
            layout.defaultFolderNames.contains { trimmed == $0 || trimmed.hasSuffix("/" + $0) }
        }.map(\.kind)
        if byName.count == 1 { return .detected(byName[0], because: "its folder name") }
        if byName.count > 1 { return .tie(byName, because: "its folder name") }
        return .detected(.sdwebimage, because: "the default")
    }

    /// A layout the user named (`--layout`, IMGWARM_LAYOUT) that the
    /// folder's contents contradict: what they point to instead, else nil.
    public static func contradiction(_ s: CacheFolderSurvey, asked kind: CacheLayoutKind) -> ([CacheLayoutKind], String)? {
        let (candidates, reason) = fromContents(s)
        if candidates.isEmpty || candidates.contains(kind) { return nil }
        return (candidates, reason)
    }
}
