#if canImport(Glibc)
import Glibc
#endif
import Foundation
import CFileScan
import ImgWarmDecode
import ImgWarmCache

/// Reads just enough of a file to sniff its format.
public enum FileSniffer {
    /// The format of `name` in the folder `dirfd`, opened without following
    /// a link.
    static func format(in dirfd: Int32, name: UnsafePointer<CChar>) -> ImageFormat? {
        guard case .success(let file) = QuietFile.open(in: dirfd, name: name) else { return nil }
        defer { file.close() }
        return format(of: file)
    }

    private static func format(of file: QuietFile) -> ImageFormat? {
        let fd = file.fd
        var head = [UInt8](repeating: 0, count: 64)  // an ftyp box with its brands
        let n = read(fd, &head, head.count)
        guard n > 0 else { return nil }
        head.removeSubrange(n...)
        if head.first == UInt8(ascii: "<") {
            // SVG is judged by its tail.
            var st = stat()
            guard fstat(fd, &st) == 0 else { return nil }
            let tailLength = min(Int(st.st_size), 100)
            var tail = [UInt8](repeating: 0, count: tailLength)
            let m = pread(fd, &tail, tailLength, off_t(Int(st.st_size) - tailLength))
            guard m == tailLength else { return nil }
            return ImageFormat.sniff([UInt8](head.prefix(1)) + tail)
        }
        return ImageFormat.sniff(head)
    }
}
