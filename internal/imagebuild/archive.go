package main

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// writeArchive writes idx as an OCI image layout in a tar file (what skopeo
// calls an oci-archive): index.json points at the image index, with its tag
// (org.opencontainers.image.ref.name) and its full name (the annotation
// containerd's import reads), so that the index is pushed as it is and
// keeps its digest. The tar is made as the layers are: entries in name
// order, one time, numeric owners.
func writeArchive(path string, idx v1.ImageIndex, tag, name string, mtime time.Time) error {
	dir, err := os.MkdirTemp("", "ctxc-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": tag,
		"io.containerd.image.name":          name,
	})); err != nil {
		return err
	}

	tmp := path + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // after a failure; renamed otherwise
	if err := tarDir(out, dir, mtime); err != nil {
		out.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// tarDir writes the files under dir to w in name order (WalkDir's lexical
// order), directories 0755 and files 0644, owned by 0:0, all at mtime.
func tarDir(w io.Writer, dir string, mtime time.Time) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: mtime.UTC().Truncate(time.Second), Typeflag: tar.TypeReg}
		if d.IsDir() {
			h.Name, h.Mode, h.Typeflag = h.Name+"/", 0o755, tar.TypeDir
			return tw.WriteHeader(h)
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return err
		}
		h.Size = info.Size()
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
