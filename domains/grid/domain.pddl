;; Grid (nextstate shipped domain).
;;
;; A robot moves between open cells of a grid and carries one key at a
;; time.  A locked cell opens when the robot, standing next to it, holds a
;; key whose shape matches the lock.  Problems name the domain `grid`.
;; Types, predicates and actions follow the ACPBench reference order.

(define (domain grid)
  (:requirements :strips :typing)

  (:types key place shape - object)

  (:predicates
    (arm-empty)                          ; the robot holds no key
    (at ?r - key ?x - place)             ; key ?r lies on ?x
    (at-robot ?x - place)                ; the robot is on ?x
    (conn ?x - place ?y - place)         ; static: ?x and ?y are neighbours
    (holding ?k - key)                   ; the robot holds ?k
    (key-shape ?k - key ?s - shape)      ; static: ?k has shape ?s
    (lock-shape ?x - place ?s - shape)   ; static: the lock on ?x has shape ?s
    (locked ?x - place)
    (open ?x - place))

  (:action move
    :parameters (?curpos - place ?nextpos - place)
    :precondition (and (at-robot ?curpos) (conn ?curpos ?nextpos) (open ?nextpos))
    :effect (and (at-robot ?nextpos) (not (at-robot ?curpos))))

  (:action pickup
    :parameters (?curpos - place ?key - key)
    :precondition (and (at-robot ?curpos) (at ?key ?curpos) (arm-empty))
    :effect (and (holding ?key) (not (at ?key ?curpos)) (not (arm-empty))))

  ;; Swap the held key ?oldkey for ?newkey lying on the robot's cell.
  (:action pickup-and-loose
    :parameters (?curpos - place ?newkey - key ?oldkey - key)
    :precondition (and (at-robot ?curpos) (holding ?oldkey) (at ?newkey ?curpos))
    :effect (and (holding ?newkey) (at ?oldkey ?curpos)
                 (not (holding ?oldkey)) (not (at ?newkey ?curpos))))

  (:action putdown
    :parameters (?curpos - place ?key - key)
    :precondition (and (at-robot ?curpos) (holding ?key))
    :effect (and (arm-empty) (at ?key ?curpos) (not (holding ?key))))

  ;; Open the neighbouring lock ?lockpos with a key of the matching shape.
  (:action unlock
    :parameters (?curpos - place ?lockpos - place ?key - key ?shape - shape)
    :precondition (and (conn ?curpos ?lockpos) (key-shape ?key ?shape)
                       (lock-shape ?lockpos ?shape) (at-robot ?curpos)
                       (locked ?lockpos) (holding ?key))
    :effect (and (open ?lockpos) (not (locked ?lockpos))))
)
