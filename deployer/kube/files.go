package kube

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxConfigMap keeps a folder's ConfigMap under the API server's 1 MiB
// object limit, with room for the keys and metadata.
const maxConfigMap = 900 << 10

var keyUnsafe = regexp.MustCompile(`[^-._a-zA-Z0-9]`)

// hostFiles holds a host file or folder that a container reads (an agent
// package, a data mount, deployment.toml) as a ConfigMap: the files keep
// their relative layout (items) and their execute bit, so the sandbox and
// the vessel compute the same fingerprint from them as on Compose.
func hostFiles(name, ns string, labels map[string]string, host, target string) (*corev1.ConfigMap, corev1.Volume, corev1.VolumeMount, error) {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(name, ns, labels),
		Data:       map[string]string{},
		BinaryData: map[string][]byte{},
	}
	src := &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}
	vol := corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: src}}
	mount := corev1.VolumeMount{Name: name, MountPath: target, ReadOnly: true}
	st, err := os.Stat(host)
	if err != nil {
		return nil, vol, mount, fmt.Errorf("kube: %w", err)
	}
	total := 0
	addFile := func(p, rel string, mode fs.FileMode) error {
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("kube: %w", err)
		}
		if total += len(b); total > maxConfigMap {
			return fmt.Errorf("kube: %s holds more than %d KiB, too much for a ConfigMap; put it into the agent's sandbox image ([agents.sandbox] dockerfile)", host, maxConfigMap>>10)
		}
		key := "f" + strconv.Itoa(len(src.Items)) + "." + keyUnsafe.ReplaceAllString(filepath.Base(rel), "_")
		if len(key) > 200 {
			key = key[:200]
		}
		if utf8.Valid(b) {
			cm.Data[key] = string(b)
		} else {
			cm.BinaryData[key] = b
		}
		m := int32(0o444)
		if mode&0o111 != 0 {
			m = 0o555
		}
		src.Items = append(src.Items, corev1.KeyToPath{Key: key, Path: filepath.ToSlash(rel), Mode: &m})
		return nil
	}
	if !st.IsDir() {
		// One file: mounted by itself at its path.
		if err := addFile(host, filepath.Base(host), st.Mode()); err != nil {
			return nil, vol, mount, err
		}
		mount.SubPath = filepath.Base(host)
		return finish(cm), vol, mount, nil
	}
	err = filepath.WalkDir(host, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		if !e.Type().IsRegular() {
			return fmt.Errorf("kube: %s is not a regular file; a ConfigMap holds only files", p)
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(host, p)
		if err != nil {
			return err
		}
		return addFile(p, rel, info.Mode())
	})
	if err != nil {
		return nil, vol, mount, fmt.Errorf("kube: files of %s: %w", host, err)
	}
	return finish(cm), vol, mount, nil
}

func finish(cm *corev1.ConfigMap) *corev1.ConfigMap {
	if len(cm.Data) == 0 {
		cm.Data = nil
	}
	if len(cm.BinaryData) == 0 {
		cm.BinaryData = nil
	}
	return cm
}
