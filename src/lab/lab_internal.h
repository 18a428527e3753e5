/* Internals of the lab module shared by the recorder node, the capture of discovered topics
 * and the client: DDS error mapping, the QoS profiles of the lab's topics and service
 * endpoints, and waiting for matches. Not public API. */
#ifndef RUNLAB_SRC_LAB_INTERNAL_H
#define RUNLAB_SRC_LAB_INTERNAL_H

#include "runlab/lab.h"
#include "runlab/record.h"

/* Cyclone's internal headers (ddsi_serdata.h through ddsrt/atomics) spell inline assembly
 * `asm`, a GNU keyword that strict C17 spells __asm__. */
#ifndef asm
#define asm __asm__
#endif
#include <dds/dds.h>

#include <stddef.h>
#include <stdint.h>

/* Sets the thread's error message from a Cyclone return code: "<what>: <Cyclone's reason>",
 * returns RL_EIO (RL_ETIMEOUT for DDS_RETCODE_TIMEOUT). */
int lab_dds_fail(dds_return_t rc, const char *what);

/* Joins `domain` (0..232) with a participant; RL_EINVAL or RL_EIO. */
int lab_participant(int domain, dds_entity_t *out);

/* Reliable QoS: transient-local when `transient_local`, keep-last `depth` (0: keep-all).
 * Never NULL (Cyclone aborts on out of memory). dds_delete_qos it. */
dds_qos_t *lab_qos(int transient_local, int depth);

/* The two topics of ROS 2 service `ros_name` (rq/<name>Request, rr/<name>Reply, typed
 * `req` and `rep`) on `participant`, and one side's endpoints with the service QoS (reliable,
 * volatile, keep-all): a server (`server` 1) reads requests and writes replies, a client
 * writes requests and reads replies. `*request`, `*reply`: the endpoint on each topic.
 * RL_OK, RL_EINVAL (name too long) or RL_EIO (Cyclone's reason). */
int lab_service_endpoints(dds_entity_t participant, const char *ros_name,
                          const dds_topic_descriptor_t *req, const dds_topic_descriptor_t *rep,
                          int server, dds_entity_t *request, dds_entity_t *reply);

/* Waits until `entity` (a writer or a reader) has at least one match, up to the monotonic
 * deadline `deadline_ns` (rl_mono_ns). RL_OK, RL_ETIMEOUT or RL_EIO. */
int lab_wait_matched(dds_entity_t entity, int is_writer, int64_t deadline_ns);

/* Cyclone calls listeners on its own threads with the argument given when the reader was
 * made, handing it over through its internal atomics, which ThreadSanitizer cannot see in an
 * uninstrumented library. lab_handoff_publish() before creating a reader with a listener and
 * lab_handoff_acquire() first thing in the listener make that hand-over visible (a release
 * and an acquire on one atomic); they cost one atomic operation. */
void lab_handoff_publish(void);
void lab_handoff_acquire(void);

/* Announces `map_path` on rt/lab/map (lab_map_announce.c): its absolute path and SHA-256,
 * from a transient-local writer of `participant` that lives as long as it. RL_ENOENT (no
 * such file), RL_EIO (reading it, DDS). */
int lab_map_announce(dds_entity_t participant, const char *map_path);

/* Copies `src` into `dst` (cap bytes), truncating; NULL becomes "". */
void lab_copy(char *dst, size_t cap, const char *src);

/* A sertype that keeps samples as raw bytes (lab_rawtype.c), for writers without type
 * information; matches by `type_name`, keyed or keyless like the writer. NULL on out of
 * memory. dds_create_topic_sertype takes it over. */
struct ddsi_sertype;
struct ddsi_sertype *lab_rawtype_new(const char *type_name, int keyed);

/* A raw sample's bytes (size ddsi_serdata_size, encapsulation header included), or NULL
 * when `d` is not one of lab_rawtype's. They live as long as a reference to `d` does, and
 * a raw sample's last reference may go from any thread, after its reader and domain are
 * gone. */
const void *lab_rawtype_bytes(const struct ddsi_serdata *d);

/* Raw samples of more than 1 KiB are allocated from a process-wide pool of freed ones
 * (lab_rawtype.c; up to 32 MiB kept). lab_rawtype_pool_trim frees what the pool keeps (the
 * capture calls it when it goes); lab_rawtype_pool_bytes says how much that is. Both are
 * thread-safe. */
void lab_rawtype_pool_trim(void);
size_t lab_rawtype_pool_bytes(void);

/* The omgidl schema of one of runlab's own types (lab_msgs.c), malloc'd, or NULL when
 * `type_name` is not one of them. */
char *lab_builtin_schema(const char *type_name);

/* Whether the omgidl schema's type `type` holds a char anywhere it reaches (members, array
 * and sequence elements, nested types): Cyclone 0.10.2's type information says char for an
 * int8 too, and the recorder warns of such a type (docs/msgdef.md). 0 when it does not parse. */
int lab_schema_has_char(const char *idl, const char *type);

/* ---- ROS 2's view of runlab's nodes (lab_ros_graph.c) ---- */

/* The DDS topic on which rmw_cyclonedds announces a participant's nodes (no rt/ prefix). */
#define RL_LAB_TOPIC_ROS_GRAPH "ros_discovery_info"

/* Writes the participant's ROS 2 nodes on ros_discovery_info (rmw_dds_common's
 * ParticipantEntitiesInfo of ROS 2 Humble: the participant's gid and, per node, its namespace,
 * name and the gids of its readers and writers; a gid is the entity's 16-byte DDS GUID padded
 * with zeros to 24), reliable, transient-local, keep-last 1 as rmw_cyclonedds does, so
 * `ros2 node list` shows them. The participant's readers and writers on rt/vehicle/<id>/...
 * belong to node `vehicle_<id>`, the others to `node_name`; all in namespace "/". Call it
 * once the participant's endpoints are made, and again when they change: the first call
 * makes the writer (a child of the participant, gone with it), later ones reuse it. RL_OK,
 * RL_ENOMEM or RL_EIO. Thread-safe as Cyclone's calls are. */
int lab_ros_graph_announce(dds_entity_t participant, const char *node_name);

/* ---- the capture's QoS rules (lab_capture_qos.c) ----------------------------------- */

/* A reader's or writer's class: reliable or best effort, transient-local (or more) or
 * volatile; 0 is best effort and volatile. A reader of class R fits (matches) a writer of
 * class W when W offers at least what R asks in both. */
enum { LAB_CLASS_RELIABLE = 1u, LAB_CLASS_DURABLE = 2u, LAB_CLASS_COUNT = 4 };

/* The class a writer offers (DDS's writer defaults where its QoS is silent). */
unsigned lab_qos_writer_class(const dds_qos_t *qos);
/* 1 when a reader of `reader_class` matches a writer of `writer_class` in reliability and
 * durability. */
int lab_qos_class_fits(unsigned reader_class, unsigned writer_class);
/* 1 when a reader of one of the classes in `reader_mask` (bit 1 << class) fits it. */
int lab_qos_fits_any(unsigned reader_mask, unsigned writer_class);
/* The readers to add, strongest first, so that every class in `offered_mask` has a reader
 * that fits it besides those in `reader_mask` (bits 1 << class); returns how many. */
size_t lab_qos_readers_needed(unsigned offered_mask, unsigned reader_mask,
                              unsigned out[LAB_CLASS_COUNT]);
/* The recorder's reader QoS of a class: keep-all, data representations XCDR1 and XCDR2.
 * Never NULL; dds_delete_qos it. */
dds_qos_t *lab_qos_reader(unsigned reader_class);
/* "reliable" / "best_effort", "transient_local" / "volatile". */
const char *lab_qos_reliability_name(unsigned c);
const char *lab_qos_durability_name(unsigned c);
/* A QoS policy's name in a message ("reliability", "ownership", ...). */
const char *lab_qos_policy_name(dds_qos_policy_id_t id);
/* The manifest's "qos" of a topic whose readers' classes are `newest_first` (count >= 1,
 * newest first; a class may repeat, one reader per partition set): the first reader's
 * reliability, durability and history, each further class under "other_readers", in the
 * order they were made. 0, or -1 when it does not fit `cap`. */
int lab_qos_describe(const unsigned *newest_first, size_t count, char *out, size_t cap);

/* What a run did not record, as the engine's unmatched list is made: entries (copied)
 * of a name and a reason, at most one per name, at most 1024 (the engine's limit); an
 * entry that cannot be added (memory, the limit) sets `failed`. Zero-initialise it. */
typedef struct lab_unmatched {
    rl_record_unmatched *v;
    size_t n, cap;
    int failed;
} lab_unmatched;
/* Adds `name` with the formatted reason (both cut to 1023 bytes) unless it is there. */
void lab_unmatched_add(lab_unmatched *l, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void lab_unmatched_free(lab_unmatched *l);

/* ---- the capture of discovered topics into the recorder engine (lab_capture.c) ---- */

typedef struct lab_capture lab_capture;

/* Watches DCPSPublication on `participant` (writers of the participant itself are
 * skipped) and records, through `rec`, every discovered topic that matches one of the
 * patterns added. `schemas` (copied) cover writers without type information. */
int lab_capture_new(lab_capture **out, dds_entity_t participant, rl_recorder *rec,
                    const rl_lab_schema *schemas, size_t schema_count);

/* Adds a pattern; writers already seen that match it are subscribed as well. `asked`: the
 * pattern was asked for (configured, or a prepared vehicle's), so a run in which it
 * matched no writer names it (lab_capture_settle); the lab's own patterns are not named
 * for want of writers, only when writers were found and not recorded. Thread-safe. */
int lab_capture_add_pattern(lab_capture *c, const char *pattern, int asked);

/* The run's prepared vehicles (`count` ids, at most 256 kept), replacing earlier ones: an
 * asked pattern of every vehicle's topic of a kind ("rt/vehicle/" '*' "/observation") that
 * recorded a prepared vehicle's topic names, in the unmatched list, each prepared vehicle
 * whose topic of that kind it did not record (lab_capture_settle). Thread-safe. */
void lab_capture_expect_vehicles(lab_capture *c, const int *ids, size_t count);

/* What the run was asked to record and did not: asked patterns that matched no writer,
 * prepared vehicles' topics that such a pattern recorded for other vehicles and not for
 * them (lab_capture_expect_vehicles), topics with writers whose QoS no reader of the
 * recorder could match (beyond reliability and durability, which get readers of their
 * own) or whose reader could not be made. Hands
 * the list to the engine (the manifest's "unmatched"); when `final` (the run ended) also
 * says each on stderr as a warning, and the list is final: later calls do nothing.
 * Thread-safe. */
void lab_capture_settle(lab_capture *c, int final);

/* Readers made so far. Thread-safe. */
/* How many discovered writer groups that a pattern matches wait for their subscription
 * (type lookup, readers), written as a sentence into `text` (with the longest one under
 * way); for warnings that say why a topic was not recorded yet. Any thread. */
size_t lab_capture_backlog(lab_capture *c, char *text, size_t cap);
size_t lab_capture_topic_count(lab_capture *c);

/* Transient-local samples received while the recorder was IDLE are held (the latest per
 * writer and instance, at most 64 per topic); after a successful prepare this hands them
 * to the engine with their own receive times and makes later ones go straight there.
 * Returns how many the engine took. Thread-safe; call once. */
size_t lab_capture_release_held(lab_capture *c);
/* Samples held now. Thread-safe. */
size_t lab_capture_held_count(lab_capture *c);
/* 1 when a READY of `vehicle` came on rt/lab/ready_status and went to the engine (or is
 * held for it). Thread-safe. */
int lab_capture_ready_seen(lab_capture *c, int vehicle);

/* Stops the discovery worker (it no longer touches the recorder afterwards). The readers
 * belong to the participant: delete the participant first. NULL is ignored. */
void lab_capture_stop(lab_capture *c);

/* Stops the worker and deletes the capture's readers, subscribers and topics (waiting for
 * their listeners to return), so that nothing reaches the recorder through it any more; the
 * participant stays. Free it afterwards. For a node that goes on to another run. NULL is
 * ignored. */
void lab_capture_close(lab_capture *c);

/* Stops (if not yet) and frees. NULL is ignored. */
void lab_capture_free(lab_capture *c);


/* ---- parameter snapshots of the lab's nodes (lab_params.c) --------------------------- */

typedef struct lab_params lab_params;

/* A reader of rt/lab/parameters on `participant` (reliable, transient-local, keep-all).
 * RL_EIO, RL_ENOMEM. Used from one thread (the recorder node's). */
int lab_params_new(lab_params **out, dds_entity_t participant);
void lab_params_free(lab_params *p);
/* Takes what came and waits up to `timeout_ns` until every writer matched on the topic
 * has delivered a snapshot; returns how many have not. */
size_t lab_params_settle(lab_params *p, int64_t timeout_ns);
/* config/nodes.json's text: `given` (the control flow's JSON object of snapshots, NULL or
 * "" for none) with each node's latest snapshot added as {"parameters", "stamp",
 * "source"}; and the manifest's scenario: {node: its parameters' "scenario" object}. Both
 * malloc'd. RL_EINVAL (`given` no JSON object), RL_ENOMEM. */
int lab_params_build(lab_params *p, const char *given, char **nodes_json, char **scenario_json);

#endif
