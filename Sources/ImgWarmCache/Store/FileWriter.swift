import ImgWarmSupport
/// How a store copies bytes into a file it has just created: chosen once,
/// when the cache is opened (`DiskCache(directory:layout:writer:)`), and
/// handed to the backend; no store call takes one. The kill tests choose a
/// slow one so that a SIGKILL lands inside a write.
public struct FileWriter: Sendable {
    /// Writes all of the buffer to the descriptor; 0 or the errno.
    public let write: @Sendable (Int32, UnsafeRawBufferPointer) -> Int32

    public init(write: @escaping @Sendable (Int32, UnsafeRawBufferPointer) -> Int32) {
        self.write = write
    }

    /// One write loop (short writes and EINTR handled).
    public static let direct = FileWriter { FileIO.writeAll($0, $1) }
}
