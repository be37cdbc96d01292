package vm

import (
	"fmt"
	"io"
)

// cpioWriter writes a cpio archive in the "newc" format the kernel unpacks
// into its initial rootfs. Every field that could vary (mtime, owner, inode
// numbering) is fixed, so the same entries always give the same bytes.
type cpioWriter struct {
	w   io.Writer
	n   int64  // bytes written, for padding
	ino uint32 // last inode number handed out
}

const (
	cpioModeDir  = 0o040000
	cpioModeFile = 0o100000
	cpioModeLink = 0o120000
	cpioModeChar = 0o020000
)

func newCPIOWriter(w io.Writer) *cpioWriter { return &cpioWriter{w: w} }

// Dir adds a directory; its parent must already be in the archive.
func (c *cpioWriter) Dir(name string, perm uint32) error {
	return c.entry(name, cpioModeDir|perm, 2, 0, 0, nil)
}

// File adds a regular file.
func (c *cpioWriter) File(name string, perm uint32, data []byte) error {
	return c.entry(name, cpioModeFile|perm, 1, 0, 0, data)
}

// Symlink adds a symbolic link name -> target.
func (c *cpioWriter) Symlink(name, target string) error {
	return c.entry(name, cpioModeLink|0o777, 1, 0, 0, []byte(target))
}

// CharDev adds a character device node.
func (c *cpioWriter) CharDev(name string, perm, major, minor uint32) error {
	return c.entry(name, cpioModeChar|perm, 1, major, minor, nil)
}

// Close writes the trailer. It does not close the underlying writer.
func (c *cpioWriter) Close() error {
	return c.entry("TRAILER!!!", 0, 1, 0, 0, nil)
}

func (c *cpioWriter) entry(name string, mode, nlink, rmajor, rminor uint32, data []byte) error {
	ino := uint32(0)
	if name != "TRAILER!!!" {
		c.ino++
		ino = c.ino
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rmajor, rminor, len(name)+1, 0)
	if err := c.write([]byte(hdr + name + "\x00")); err != nil {
		return fmt.Errorf("writing cpio entry %s: %w", name, err)
	}
	if err := c.write(data); err != nil {
		return fmt.Errorf("writing cpio entry %s: %w", name, err)
	}
	return nil
}

// write writes b and pads the archive to a multiple of four bytes.
func (c *cpioWriter) write(b []byte) error {
	k, err := c.w.Write(b)
	c.n += int64(k)
	if err != nil {
		return err
	}
	pad := (4 - c.n%4) % 4
	k, err = c.w.Write(make([]byte, pad))
	c.n += int64(k)
	return err
}
