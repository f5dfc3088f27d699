// Package pix builds, parses and renders PIX BR Codes (EMV QRCPS-MPM as profiled by the
// Banco Central do Brasil), the "copia e cola" string and QR image a buyer pays with.
package pix

// CRC16 returns the CRC-16/CCITT-FALSE checksum (poly 0x1021, init 0xFFFF, no reflection, no
// final XOR) that closes every BR Code in field 63.
func CRC16(data []byte) uint16 {
	crc := uint16(0xFFFF)
	for _, b := range data {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
