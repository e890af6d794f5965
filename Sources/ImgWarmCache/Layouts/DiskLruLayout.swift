#if canImport(Glibc)
import Glibc
#endif
import Crypto
import ImgWarmSupport

/// A library whose cache is a DiskLruCache folder (Glide, Coil 3, Coil 2,
/// OkHttp): an entry is `<disk key>.<i>`, one file per value, the image in
/// value `imageValue`; the journal is the index, and prune goes through it.
/// What differs between them is the journal's header, the value that holds
/// the image, the disk key (SHA-256 hex of the key unless the library says
/// otherwise) and the metadata value beside the image.
public protocol DiskLruLayout: BuiltInLayout {
    /// The app version and value count the library opens its journal with.
    static var journal: DiskLruJournal { get }
    /// The value file that holds the image.
    static var imageValue: Int { get }
    /// The size `prune` trims to when none is given.
    static var defaultSizeLimit: UInt64 { get }
    /// The key as the library names files (`<diskKey>.<i>`).
    static func diskKey(_ key: String) -> String
    /// How many hex digits a disk key has.
    static var diskKeyLength: Int { get }
}

extension DiskLruLayout {
    /// SHA-256 of the key's UTF-8 bytes, lowercase hex: Glide's
    /// `SafeKeyGenerator` (`Util.sha256BytesToHex`), Coil's `String.hash()`
    /// (`encodeUtf8().sha256().hex()`).
    public static func diskKey(_ key: String) -> String {
        Hex.encode(SHA256.hash(data: Array(key.utf8)))
    }

    public static var diskKeyLength: Int { 64 }

    public var indexKind: CacheIndexKind {
        .diskLruJournal(appVersion: Self.journal.appVersion, valueCount: Self.journal.valueCount)
    }

    /// DiskLruCache `Entry.getCleanFile(i)` is `key.i`, `getDirtyFile(i)`
    /// `key.i.tmp`; the folder is flat.
    public func fitsEntryName(_ name: [UInt8], inFolder folder: String) -> Bool {
        NameRule.valueFile(name, keyLength: Self.diskKeyLength, valueCount: Self.journal.valueCount)
    }

    public func entryName(forKey key: String) -> CacheEntryName {
        CacheEntryName(storedName: Self.diskKey(key) + ".\(Self.imageValue)")
    }

    /// The journal index over the cache folder; `metadata` writes the
    /// value beside the image (empty by default).
    func journalIndex(folders: CacheFolders, writer: FileWriter, metadata: @escaping @Sendable (StoredResponse?) -> [UInt8] = { _ in [] },
                      metadataMode: mode_t = 0o644) -> DiskLruIndex {
        DiskLruIndex(directory: folders.directory, writer: writer, journal: Self.journal, imageValue: Self.imageValue,
                     defaultMaxSize: Self.defaultSizeLimit, layoutName: kind.rawValue,
                     metadata: metadata, metadataMode: metadataMode)
    }

    public func makeBackend(folders: CacheFolders, writer: FileWriter) -> any CacheBackend {
        journalIndex(folders: folders, writer: writer)
    }
}
