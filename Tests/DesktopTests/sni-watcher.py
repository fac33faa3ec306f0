#!/usr/bin/python3
"""A StatusNotifierWatcher and host for the tray tests.

Owns org.kde.StatusNotifierWatcher on the bus named by DBUS_SESSION_BUS_ADDRESS, as a
panel does, and reads every item that registers the way a panel does: its properties, and
its com.canonical.dbusmenu menu, again after each change signal. Each reading is appended
to RECORD as one JSON line:

  {"service": ..., "status": ..., "icon": ..., "title": ..., "tooltip": [title, body],
   "menu": [{"id": 3, "label": "Pause all", "enabled": true, "depth": 0, ...}, ...],
   "registrations": N}

A test plays the person through org.instantupload.Test:
  Click(label)   sends the menu event "clicked" to the item whose label is `label`
  Activate()     a left click on the icon

Runs on Debian's python3-dbus and python3-gi (not the virtualenv): /usr/bin/python3.
The RECORD file appears once the name is owned; tests wait for it.
"""
import argparse
import json
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

NAME = "org.kde.StatusNotifierWatcher"
PATH = "/StatusNotifierWatcher"
ITEM = "org.kde.StatusNotifierItem"
MENU = "com.canonical.dbusmenu"
PROPS = "org.freedesktop.DBus.Properties"
TEST = "org.instantupload.Test"


def flatten(node, depth, out):
    """The menu tree (ia{sv}av) as a list of items in order, with their depth."""
    ident, props, children = node
    entry = {"id": int(ident), "depth": depth}
    for key, value in props.items():
        if isinstance(value, dbus.Boolean):
            entry[str(key)] = bool(value)
        elif isinstance(value, (dbus.Int32, dbus.UInt32)):
            entry[str(key)] = int(value)
        else:
            entry[str(key)] = str(value)
    if depth >= 0:
        out.append(entry)
    for child in children:
        flatten(child, depth + 1, out)
    return out


class Watcher(dbus.service.Object):
    def __init__(self, bus, record):
        super().__init__(bus, PATH)
        self.bus = bus
        self.record_path = record
        self.items = {}  # service name -> (bus name, object path)
        self.menus = {}
        self.registrations = 0
        bus.add_signal_receiver(self.changed, dbus_interface=ITEM, sender_keyword="sender", member_keyword="member")
        bus.add_signal_receiver(self.changed, dbus_interface=MENU, sender_keyword="sender", member_keyword="member")

    def write(self, entry):
        with open(self.record_path, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def read(self, service):
        name, path = self.items[service]
        obj = self.bus.get_object(name, path, introspect=False)
        props = obj.GetAll(ITEM, dbus_interface=PROPS)
        menu_path = str(props.get("Menu", "/"))
        menu = self.bus.get_object(name, menu_path, introspect=False)
        revision, layout = menu.GetLayout(0, -1, dbus.Array([], signature="s"), dbus_interface=MENU)
        tooltip = props.get("ToolTip", ("", [], "", ""))
        self.menus[service] = (name, menu_path, flatten(layout, -1, []))
        self.write({"service": service, "status": str(props.get("Status", "")), "icon": str(props.get("IconName", "")),
                    "title": str(props.get("Title", "")), "tooltip": [str(tooltip[2]), str(tooltip[3])],
                    "item_is_menu": bool(props.get("ItemIsMenu", False)), "revision": int(revision),
                    "menu": self.menus[service][2], "registrations": self.registrations})

    def changed(self, *args, sender=None, member=None):
        for service, (name, _) in list(self.items.items()):
            if name == sender or self.bus.get_name_owner(name) == sender:
                try:
                    self.read(service)
                except dbus.DBusException as e:
                    self.write({"service": service, "error": str(e)})

    @dbus.service.method(NAME, in_signature="s", sender_keyword="sender")
    def RegisterStatusNotifierItem(self, service, sender=None):
        # A bus name, or an object path on the caller's connection.
        name, path = (sender, service) if service.startswith("/") else (service, "/StatusNotifierItem")
        self.registrations += 1
        self.items[str(service)] = (str(name), str(path))
        self.StatusNotifierItemRegistered(service)
        GLib.idle_add(lambda: self.read(str(service)) and False)

    @dbus.service.method(NAME, in_signature="s")
    def RegisterStatusNotifierHost(self, service):
        pass

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, prop):
        return self.GetAll(interface)[prop]

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"RegisteredStatusNotifierItems": dbus.Array(list(self.items), signature="s"),
                "IsStatusNotifierHostRegistered": dbus.Boolean(True), "ProtocolVersion": dbus.Int32(0)}

    @dbus.service.signal(NAME, signature="s")
    def StatusNotifierItemRegistered(self, service):
        pass

    @dbus.service.method(TEST, in_signature="s", out_signature="i")
    def Click(self, label):
        """Clicks the menu item labelled `label` (as the panel shows it: `__` is `_`)."""
        for service, (name, path, items) in self.menus.items():
            for entry in items:
                if entry.get("label", "").replace("__", "_") == label:
                    menu = self.bus.get_object(name, path, introspect=False)
                    menu.Event(dbus.Int32(entry["id"]), "clicked", dbus.Int32(0, variant_level=1),
                               dbus.UInt32(int(time.time())), dbus_interface=MENU)
                    return entry["id"]
        raise dbus.DBusException("no menu item labelled %r" % label, name="org.instantupload.Test.NoSuchItem")

    @dbus.service.method(TEST)
    def Activate(self):
        for service, (name, path) in self.items.items():
            self.bus.get_object(name, path, introspect=False).Activate(dbus.Int32(0), dbus.Int32(0), dbus_interface=ITEM)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", required=True, help="file to append JSON lines to")
    args = parser.parse_args()
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    watcher = Watcher(bus, args.record)
    name = dbus.service.BusName(NAME, bus, do_not_queue=True)
    open(args.record, "a").close()
    GLib.MainLoop().run()
    del name, watcher


if __name__ == "__main__":
    main()
