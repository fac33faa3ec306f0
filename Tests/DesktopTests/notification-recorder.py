#!/usr/bin/python3
"""A notification server for the Desktop tests.

Owns org.freedesktop.Notifications on the bus named by DBUS_SESSION_BUS_ADDRESS, answers
like a real server, and appends every call it receives to RECORD as one JSON line. A test
plays the person through org.instantupload.Test.Invoke(id, key): the server emits
ActionInvoked(id, key) and then NotificationClosed(id, 2), as servers do on a click.

Runs on Debian's python3-dbus and python3-gi (not the virtualenv): /usr/bin/python3.
The RECORD file appears once the name is owned; tests wait for it.
"""
import argparse
import json

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
TEST = "org.instantupload.Test"


def plain(value):
    """dbus-python's typed values as JSON-ready ones."""
    if isinstance(value, (dbus.Byte, dbus.Int32, dbus.UInt32, dbus.Int64, dbus.UInt64, dbus.Int16, dbus.UInt16)):
        return int(value)
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, dbus.String):
        return str(value)
    if isinstance(value, (dbus.Array, list)):
        return [plain(v) for v in value]
    if isinstance(value, (dbus.Dictionary, dict)):
        return {str(k): plain(v) for k, v in value.items()}
    return value


class Recorder(dbus.service.Object):
    def __init__(self, bus, record, capabilities):
        super().__init__(bus, PATH)
        self.record_path = record
        self.capabilities = capabilities
        self.next_id = 41  # not 1: an id that happens to be right by accident proves nothing

    def record(self, entry):
        with open(self.record_path, "a") as f:
            f.write(json.dumps(entry) + "\n")

    @dbus.service.method(NAME, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout):
        if replaces_id:
            nid = int(replaces_id)
        else:
            nid = self.next_id
            self.next_id += 1
        self.record({"method": "Notify", "id": nid, "app_name": str(app_name), "replaces_id": int(replaces_id),
                     "icon": str(app_icon), "summary": str(summary), "body": str(body), "actions": plain(actions),
                     "hints": plain(hints), "expire_timeout": int(expire_timeout)})
        return dbus.UInt32(nid)

    @dbus.service.method(NAME, in_signature="u")
    def CloseNotification(self, nid):
        self.record({"method": "CloseNotification", "id": int(nid)})
        self.NotificationClosed(nid, 3)

    @dbus.service.method(NAME, out_signature="as")
    def GetCapabilities(self):
        return self.capabilities

    @dbus.service.method(NAME, out_signature="ssss")
    def GetServerInformation(self):
        return ("recorder", "instant-upload tests", "1.0", "1.2")

    @dbus.service.signal(NAME, signature="us")
    def ActionInvoked(self, nid, key):
        pass

    @dbus.service.signal(NAME, signature="uu")
    def NotificationClosed(self, nid, reason):
        pass

    @dbus.service.method(TEST, in_signature="us")
    def Invoke(self, nid, key):
        """The person clicks `key` on notification `nid`."""
        self.ActionInvoked(nid, key)
        self.NotificationClosed(nid, 2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", required=True, help="file to append JSON lines to")
    parser.add_argument("--capabilities", default="actions,body", help="comma-separated GetCapabilities answer")
    args = parser.parse_args()
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    recorder = Recorder(bus, args.record, [c for c in args.capabilities.split(",") if c])
    name = dbus.service.BusName(NAME, bus, do_not_queue=True)
    open(args.record, "a").close()
    GLib.MainLoop().run()
    del name, recorder


if __name__ == "__main__":
    main()
