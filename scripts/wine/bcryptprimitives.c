/* ProcessPrng for Wine 8 (Debian 12), which lacks bcryptprimitives.dll.
 *
 * Rust's standard library on Windows takes its random bytes (for HashMap seeds) from ProcessPrng in
 * bcryptprimitives.dll, which Windows 10 and later have and Wine has from version 9. Wine 8 has no
 * such DLL, so vkskin.exe does not start there. scripts/windows-check puts this stand-in beside
 * vkskin.exe for the Wine run only; it is never shipped: Windows has the real one. It answers with
 * RtlGenRandom (advapi32's SystemFunction036), which Wine 8 has. Written here because no package
 * provides it. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
