;; Rovers, STRIPS version (nextstate shipped domain).
;;
;; Planetary rovers navigate between waypoints, take soil and rock samples
;; (one store each), calibrate cameras and take images, and send the data
;; to the lander from a waypoint that sees it.  Communication briefly uses
;; the rover and the channel: both are deleted and re-added, so they stay
;; true afterwards.  Problems name the domain `rover`.
;; Types, predicates and actions follow the ACPBench reference order.

(define (domain rover)
  (:requirements :strips :typing)

  (:types camera lander mode objective rover store waypoint)

  (:predicates
    (at ?x - rover ?y - waypoint)
    (at_lander ?x - lander ?y - waypoint)
    (at_rock_sample ?w - waypoint)
    (at_soil_sample ?w - waypoint)
    (available ?r - rover)
    (calibrated ?c - camera ?r - rover)
    (calibration_target ?i - camera ?o - objective)
    (can_traverse ?r - rover ?x - waypoint ?y - waypoint)
    (channel_free ?l - lander)
    (communicated_image_data ?o - objective ?m - mode)
    (communicated_rock_data ?w - waypoint)
    (communicated_soil_data ?w - waypoint)
    (empty ?s - store)
    (equipped_for_imaging ?r - rover)
    (equipped_for_rock_analysis ?r - rover)
    (equipped_for_soil_analysis ?r - rover)
    (full ?s - store)
    (have_image ?r - rover ?o - objective ?m - mode)
    (have_rock_analysis ?r - rover ?w - waypoint)
    (have_soil_analysis ?r - rover ?w - waypoint)
    (on_board ?i - camera ?r - rover)
    (store_of ?s - store ?r - rover)
    (supports ?c - camera ?m - mode)
    (visible ?w - waypoint ?p - waypoint)
    (visible_from ?o - objective ?w - waypoint))

  ;; Calibrate camera ?i of ?r on its target ?t, visible from ?w.
  (:action calibrate
    :parameters (?r - rover ?i - camera ?t - objective ?w - waypoint)
    :precondition (and (equipped_for_imaging ?r) (calibration_target ?i ?t)
                       (at ?r ?w) (visible_from ?t ?w) (on_board ?i ?r))
    :effect (calibrated ?i ?r))

  (:action communicate_image_data
    :parameters (?r - rover ?l - lander ?o - objective ?m - mode ?x - waypoint ?y - waypoint)
    :precondition (and (at ?r ?x) (at_lander ?l ?y) (have_image ?r ?o ?m)
                       (visible ?x ?y) (available ?r) (channel_free ?l))
    :effect (and (not (available ?r)) (not (channel_free ?l))
                 (channel_free ?l) (available ?r)
                 (communicated_image_data ?o ?m)))

  (:action communicate_rock_data
    :parameters (?r - rover ?l - lander ?p - waypoint ?x - waypoint ?y - waypoint)
    :precondition (and (at ?r ?x) (at_lander ?l ?y) (have_rock_analysis ?r ?p)
                       (visible ?x ?y) (available ?r) (channel_free ?l))
    :effect (and (not (available ?r)) (not (channel_free ?l))
                 (channel_free ?l) (available ?r)
                 (communicated_rock_data ?p)))

  (:action communicate_soil_data
    :parameters (?r - rover ?l - lander ?p - waypoint ?x - waypoint ?y - waypoint)
    :precondition (and (at ?r ?x) (at_lander ?l ?y) (have_soil_analysis ?r ?p)
                       (visible ?x ?y) (available ?r) (channel_free ?l))
    :effect (and (not (available ?r)) (not (channel_free ?l))
                 (channel_free ?l) (available ?r)
                 (communicated_soil_data ?p)))

  ;; Empty the store ?y of rover ?x.
  (:action drop
    :parameters (?x - rover ?y - store)
    :precondition (and (store_of ?y ?x) (full ?y))
    :effect (and (empty ?y) (not (full ?y))))

  (:action navigate
    :parameters (?x - rover ?y - waypoint ?z - waypoint)
    :precondition (and (can_traverse ?x ?y ?z) (available ?x) (at ?x ?y) (visible ?y ?z))
    :effect (and (at ?x ?z) (not (at ?x ?y))))

  (:action sample_rock
    :parameters (?x - rover ?s - store ?p - waypoint)
    :precondition (and (at ?x ?p) (at_rock_sample ?p) (equipped_for_rock_analysis ?x)
                       (store_of ?s ?x) (empty ?s))
    :effect (and (full ?s) (have_rock_analysis ?x ?p)
                 (not (empty ?s)) (not (at_rock_sample ?p))))

  (:action sample_soil
    :parameters (?x - rover ?s - store ?p - waypoint)
    :precondition (and (at ?x ?p) (at_soil_sample ?p) (equipped_for_soil_analysis ?x)
                       (store_of ?s ?x) (empty ?s))
    :effect (and (full ?s) (have_soil_analysis ?x ?p)
                 (not (empty ?s)) (not (at_soil_sample ?p))))

  ;; Taking an image uses up the camera's calibration.
  (:action take_image
    :parameters (?r - rover ?p - waypoint ?o - objective ?i - camera ?m - mode)
    :precondition (and (calibrated ?i ?r) (on_board ?i ?r) (equipped_for_imaging ?r)
                       (supports ?i ?m) (visible_from ?o ?p) (at ?r ?p))
    :effect (and (have_image ?r ?o ?m) (not (calibrated ?i ?r))))
)
