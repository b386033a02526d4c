;; Floor-tile, unit-cost version (nextstate shipped domain).
;;
;; Robots paint tiles of a grid.  A robot paints only the tile directly
;; above or below it and cannot stand on a painted tile (painting removes
;; `clear`).  (up ?a ?b): ?a lies directly above ?b; likewise down, left,
;; right.  Problems name the domain `floor-tile`.
;; Types, predicates and actions follow the ACPBench reference order.

(define (domain floor-tile)
  (:requirements :typing)

  (:types color robot tile - object)

  (:predicates
    (available-color ?c - color)         ; static: ?c can be loaded
    (clear ?x - tile)                    ; ?x is unpainted and unoccupied
    (down ?x - tile ?y - tile)           ; static: ?x is directly below ?y
    (free-color ?r - robot)              ; unused by the operators
    (left ?x - tile ?y - tile)           ; static: ?x is directly left of ?y
    (painted ?x - tile ?c - color)       ; ?x has colour ?c
    (right ?x - tile ?y - tile)          ; static: ?x is directly right of ?y
    (robot-at ?r - robot ?x - tile)      ; ?r stands on ?x
    (robot-has ?r - robot ?c - color)    ; ?r's brush holds colour ?c
    (up ?x - tile ?y - tile))            ; static: ?x is directly above ?y

  (:action change-color
    :parameters (?r - robot ?c - color ?c2 - color)
    :precondition (and (robot-has ?r ?c) (available-color ?c2))
    :effect (and (robot-has ?r ?c2) (not (robot-has ?r ?c))))

  ;; Moves: from ?x to the clear neighbour ?y in the named direction.
  (:action down
    :parameters (?r - robot ?x - tile ?y - tile)
    :precondition (and (robot-at ?r ?x) (down ?y ?x) (clear ?y))
    :effect (and (robot-at ?r ?y) (clear ?x)
                 (not (robot-at ?r ?x)) (not (clear ?y))))

  (:action left
    :parameters (?r - robot ?x - tile ?y - tile)
    :precondition (and (robot-at ?r ?x) (left ?y ?x) (clear ?y))
    :effect (and (robot-at ?r ?y) (clear ?x)
                 (not (robot-at ?r ?x)) (not (clear ?y))))

  ;; Paint the clear tile ?y directly below the robot's tile ?x.
  (:action paint-down
    :parameters (?r - robot ?y - tile ?x - tile ?c - color)
    :precondition (and (robot-has ?r ?c) (robot-at ?r ?x) (down ?y ?x) (clear ?y))
    :effect (and (painted ?y ?c) (not (clear ?y))))

  ;; Paint the clear tile ?y directly above the robot's tile ?x.
  (:action paint-up
    :parameters (?r - robot ?y - tile ?x - tile ?c - color)
    :precondition (and (robot-has ?r ?c) (robot-at ?r ?x) (up ?y ?x) (clear ?y))
    :effect (and (painted ?y ?c) (not (clear ?y))))

  (:action right
    :parameters (?r - robot ?x - tile ?y - tile)
    :precondition (and (robot-at ?r ?x) (right ?y ?x) (clear ?y))
    :effect (and (robot-at ?r ?y) (clear ?x)
                 (not (robot-at ?r ?x)) (not (clear ?y))))

  (:action up
    :parameters (?r - robot ?x - tile ?y - tile)
    :precondition (and (robot-at ?r ?x) (up ?y ?x) (clear ?y))
    :effect (and (robot-at ?r ?y) (clear ?x)
                 (not (robot-at ?r ?x)) (not (clear ?y))))
)
