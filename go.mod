module github.com/netagent/netagent

go 1.26.8

require (
	github.com/coreos/go-iptables v0.8.0 // indirect
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/sirupsen/logrus v1.10.2 // indirect
	github.com/vishvananda/netlink v1.3.1 // indirect
	github.com/vishvananda/netns v0.0.5 // indirect
	golang.org/x/sys v0.13.0 // indirect
)
