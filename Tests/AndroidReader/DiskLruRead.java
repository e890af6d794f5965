// Opens a DiskLruCache folder with OkHttp's own DiskLruCache (Debian's
// libokhttp-java, OkHttp 3.13: okhttp3.internal.cache.DiskLruCache, the
// class Glide's and Coil's journals descend from) and prints every entry it
// reads back, one line each:
//
//   KEY <tab> journal length of value 0 <tab> bytes read <tab> SHA-256 ... per value
//
// Usage: java DiskLruRead DIR APP_VERSION VALUE_COUNT
// The size limit is the largest there is, so that opening evicts nothing.
// A journal OkHttp finds corrupt makes it log "is corrupt" on stderr and
// delete the folder: the caller checks stderr and the entry list.
import java.io.File;
import java.security.MessageDigest;
import java.util.Iterator;
import okhttp3.internal.cache.DiskLruCache;
import okhttp3.internal.io.FileSystem;
import okio.Buffer;
import okio.BufferedSource;
import okio.Okio;

public final class DiskLruRead {
  public static void main(String[] args) throws Exception {
    File dir = new File(args[0]);
    int appVersion = Integer.parseInt(args[1]);
    int valueCount = Integer.parseInt(args[2]);
    DiskLruCache cache =
        DiskLruCache.create(FileSystem.SYSTEM, dir, appVersion, valueCount, Long.MAX_VALUE);
    cache.initialize();
    StringBuilder out = new StringBuilder();
    Iterator<DiskLruCache.Snapshot> snapshots = cache.snapshots();
    while (snapshots.hasNext()) {
      DiskLruCache.Snapshot snapshot = snapshots.next();
      out.append(snapshot.key());
      for (int i = 0; i < valueCount; i++) {
        BufferedSource source = Okio.buffer(snapshot.getSource(i));
        Buffer buffer = new Buffer();
        source.readAll(buffer);
        byte[] bytes = buffer.readByteArray();
        out.append('\t').append(snapshot.getLength(i)).append('\t').append(bytes.length)
            .append('\t').append(hex(MessageDigest.getInstance("SHA-256").digest(bytes)));
      }
      snapshot.close();
      out.append('\n');
    }
    cache.close();
    System.out.print(out);
  }

  private static String hex(byte[] digest) {
    StringBuilder s = new StringBuilder();
    for (byte b : digest) s.append(String.format("%02x", b));
    return s.toString();
  }
}
