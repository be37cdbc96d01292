package netplan

import (
	"go.yaml.in/yaml/v3"
)

// notImported are netplan's device keys netagent does not express, each
// with why (refused as unsupported rather than unknown).
var notImported = map[string]string{
	"ipv6-privacy":                   "IPv6 privacy addresses (networkd's IPv6PrivacyExtensions): netagent derives no sysctl from it (the intent's sysctls can set net.ipv6.conf.IFACE.use_tempaddr)",
	"ipv6-address-generation":        "the SLAAC address generation mode: the intent's ipv6 section has no such setting",
	"ipv6-address-token":             "a SLAAC address token: the intent's ipv6 section has no such setting",
	"ipv6-mtu":                       "an IPv6 MTU apart from the link's (networkd's IPv6MTUBytes): the intent has the link's MTU only",
	"critical":                       "networkd's KeepConfiguration (addresses kept when networkd stops): netagent has no such mode",
	"emit-lldp":                      "LLDP: netagent sends none",
	"ignore-carrier":                 "networkd's ConfigureWithoutCarrier: netagent has no such setting",
	"infiniband-mode":                "the IPoIB mode (datagram or connected): netagent configures no InfiniBand",
	"neigh-suppress":                 "ARP/ND suppression on the bridge port (the kernel's neigh_suppress): the intent's bridgePort has no such setting",
	"networkmanager":                 "NetworkManager's own settings: not expressible",
	"openvswitch":                    "an Open vSwitch device: netagent does not manage Open vSwitch",
	"virtual-function-count":         "SR-IOV virtual functions: netagent creates none",
	"embedded-switch-mode":           "the SR-IOV NIC's eswitch mode (devlink): netagent has no such setting",
	"delay-virtual-functions-rebind": "SR-IOV virtual functions: netagent creates none",
	"link":                           "an SR-IOV virtual function of the NIC link names: netagent creates no virtual functions",
	"auth":                           "802.1X authentication (wpa_supplicant): netagent runs no supplicant",
	"activation-mode":                "netplan's activation-mode (networkd's ActivationPolicy): netagent has no such setting",
	"access-points":                  "a wireless device's networks: netagent configures no wireless interfaces",
}

// ovsDevice says why dev is Open vSwitch's (its openvswitch key, or a
// bond or bridge with a port that is: netplan renders it for OVS), with
// the key to refuse it at; ok false: it is not.
func (c *conv) ovsDevice(dev *device) (at entry, why string, ok bool) {
	return c.ovsDeviceSeen(dev, map[*device]bool{})
}

// ovsDeviceSeen is ovsDevice, not looking again at the devices seen (a
// loop of ports, which netplan refuses, ends here too).
func (c *conv) ovsDeviceSeen(dev *device, seen map[*device]bool) (at entry, why string, ok bool) {
	seen[dev] = true
	if e, has := dev.keys["openvswitch"]; has {
		return e, notImported["openvswitch"], true
	}
	e, has := dev.keys["interfaces"]
	if !has || e.v.Kind != yaml.SequenceNode || dev.section != "bonds" && dev.section != "bridges" {
		return entry{}, "", false
	}
	for _, n := range e.v.Content {
		if c.ovsPorts[n.Value] {
			return entry{e.d, e.k, n}, "a port of Open vSwitch (network.openvswitch.ports), so netplan makes this an OVS " + dev.section[:len(dev.section)-1] + ": netagent does not manage Open vSwitch", true
		}
		if p := c.devs[n.Value]; p != nil && !seen[p] {
			if _, _, ovs := c.ovsDeviceSeen(p, seen); ovs {
				return entry{e.d, e.k, n}, n.Value + " is an Open vSwitch device, so netplan makes this an OVS " + dev.section[:len(dev.section)-1] + ": netagent does not manage Open vSwitch", true
			}
		}
	}
	return entry{}, "", false
}

// ovsPatchPorts records network.openvswitch.ports (pairs of patch ports).
func (c *conv) ovsPatchPorts(ovs *yaml.Node) {
	for _, p := range pairs(ovs) {
		if p.k.Value != "ports" || p.v.Kind != yaml.SequenceNode {
			continue
		}
		for _, pair := range p.v.Content {
			for _, n := range pair.Content {
				if n.Kind == yaml.ScalarNode && n.Value != "" {
					c.ovsPorts[n.Value] = true
				}
			}
		}
	}
}
